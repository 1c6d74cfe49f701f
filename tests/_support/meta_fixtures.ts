// Management webhooks exactly as the reference (meta-management.md §2)
// quotes them from pywa's test fixtures (tests/data/updates/*.json) and
// Meta's pages: raw text, so their integer ids reach the server as numbers.
// REFERENCE_WABA is the WABA id they name (entry[].id); forWaba() swaps in
// a test's.

export const REFERENCE_WABA = "102290129340398";

/** pywa template_status_update.json */
export const TEMPLATE_STATUS_REJECTED =
  `{"entry":[{"id":"102290129340398","time":1751247548,"changes":[{"value":{
  "event":"REJECTED","message_template_id":1689556908129835,"message_template_name":"abandoned_cart",
  "message_template_language":"en","reason":"INVALID_FORMAT","message_template_category":"MARKETING",
  "rejection_info":{"reason":"Your template has parameters placed next to each other (like {{1}}{{2}}) without text or punctuation between them.",
                    "recommendation":"Separate parameters with descriptive text and ensure each parameter is clearly contextualized."}},
  "field":"message_template_status_update"}]}],"object":"whatsapp_business_account"}`;

/** pywa template_quality_update.json */
export const TEMPLATE_QUALITY =
  `{"entry":[{"id":"102290129340398","time":1674864290,"changes":[{"value":{
  "previous_quality_score":"GREEN","new_quality_score":"YELLOW","message_template_id":806312974732579,
  "message_template_name":"welcome_template","message_template_language":"en_US"},
  "field":"message_template_quality_update"}]}],"object":"whatsapp_business_account"}`;

/** pywa template_components_update.json (its value, in Meta's envelope) */
export const TEMPLATE_COMPONENTS =
  `{"entry":[{"id":"102290129340398","time":1751247548,"changes":[{"value":{"message_template_id":1315502779341834,"message_template_name":"order_confirmation","message_template_language":"en_US",
  "message_template_title":"Your order is confirmed!","message_template_element":"Thank you for your order, {{1}}! …",
  "message_template_footer":"Lucky Shrub: the Succulent Specialists!",
  "message_template_buttons":[{"message_template_button_type":"PHONE_NUMBER","message_template_button_text":"Phone support","message_template_button_phone_number":"+15550783881"},
                              {"message_template_button_type":"URL","message_template_button_text":"Email support","message_template_button_url":"https://www.luckyshrub.com/support"}]},
 "field":"message_template_components_update"}]}],"object":"whatsapp_business_account"}`;

/** pywa template_category_update.json */
export const TEMPLATE_CATEGORY =
  `{"entry":[{"id":"57438975935","time":1750344882,"changes":[{"value":{"message_template_id":12345678,
 "message_template_name":"my_message_template","message_template_language":"he","new_category":"MARKETING"},
 "field":"template_category_update"}]}],"object":"whatsapp_business_account"}`;

/** Meta phone_number_quality_update.md */
export const NUMBER_QUALITY =
  `{"entry":[{"id":"102290129340398","time":1748454394,"changes":[{"value":{
  "display_phone_number":"15550783881","event":"THROUGHPUT_UPGRADE","current_limit":"TIER_UNLIMITED"},
  "field":"phone_number_quality_update"}]}],"object":"whatsapp_business_account"}`;

/** Meta phone_number_name_update.md */
export const NUMBER_NAME =
  `{"entry":[{"id":"102290129340398","time":1739321024,"changes":[{"value":{
  "display_phone_number":"15550783881","decision":"APPROVED","requested_verified_name":"Lucky Shrub","rejection_reason":null},
  "field":"phone_number_name_update"}]}],"object":"whatsapp_business_account"}`;

/** pywa account_update.json (the restriction fixture) */
export const ACCOUNT_RESTRICTION =
  `{"object":"whatsapp_business_account","entry":[{"id":"102290129340398","time":1641330498,"changes":[{"value":{
  "event":"ACCOUNT_RESTRICTION","restriction_info":[
    {"restriction_type":"RESTRICTED_BIZ_INITIATED_MESSAGING","expiration":1641330498},
    {"restriction_type":"RESTRICTED_ADD_PHONE_NUMBER_ACTION","expiration":1641330498}]},
  "field":"account_update"}]}]}`;

/** Meta account_alert.md */
export const ACCOUNT_ALERT =
  `{"object":"whatsapp_business_account","entry":[{"id":"102290129340398","time":1745612159,"changes":[{"field":"account_alerts","value":{
  "entity_type":"BUSINESS","entity_id":"506914307656634","alert_info":{"alert_severity":"WARNING","alert_status":"ACTIVE",
  "alert_type":"INCREASED_CAPABILITIES_ELIGIBILITY_DEFERRED","alert_description":"Limits cannot be increased for your business …"}}}]}]}`;

/** Meta business_capability_update.md (a field stored for the operator) */
export const BUSINESS_CAPABILITY =
  `{"entry":[{"id":"524126980791429","time":1739321024,"changes":[{"value":{
  "max_daily_conversations_per_business":2000,"max_phone_numbers_per_waba":25},
  "field":"business_capability_update"}]}],"object":"whatsapp_business_account"}`;

/** The fixture's text with its WABA id (entry[].id) replaced by `wabaId`. */
export function forWaba(text: string, wabaId: string): string {
  return text.replace(/"id":"\d+","time"/, `"id":"${wabaId}","time"`);
}
