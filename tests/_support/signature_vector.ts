/** The signature test vector docs/webhooks.md shows; the receiver examples there are checked against it too. */
export const SIGNATURE_VECTOR = {
  secret: "whsec_test_5WZ2cS1nq8Vb3kLm0Pq7Rt9Xy4Ad6Fg",
  timestamp: 1763640000,
  body:
    '{"event":"message.received","eventId":"0196a3e2-6b1c-7f00-8a00-000000000001","webhookId":"0196a3e2-6b1c-7f00-8a00-0000000000aa","deliveredAt":"2025-11-20T12:00:00.000Z","attempt":1,"data":{"id":"0196a3e2-6b1c-7f00-8a00-000000000002","type":"text","content":{"body":"Hola"}}}',
  // Computed independently: printf '%s' "<t>.<body>" | openssl dgst -sha256 -hmac "<secret>"
  header:
    "t=1763640000,v1=5658955f1ccd0bef1878b638be7eee454c75686108e166b214c16bf172be6450",
};
