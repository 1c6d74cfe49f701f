// Command lines the CLI tests share: a channel and a template of account "acme".

export const COMPONENTS = '[{"type":"BODY","text":"Hola {{1}}"}]';

/** Channel +5491122334455 of account "acme". */
export const CREATE_CHANNEL = [
  "channels",
  "create",
  "--account",
  "acme",
  "--phone",
  "+5491122334455",
  "--display-name",
  "Acme",
  "--upstream-phone-number-id",
  "1065",
  "--waba-id",
  "1022",
  "--access-token",
  "token",
];

/** Template order_update of account "acme" in `language`, with `status`. */
export function createTemplateArgs(language: string, status: string): string[] {
  return [
    "templates",
    "create",
    "--account",
    "acme",
    "--name",
    "order_update",
    "--language",
    language,
    "--category",
    "UTILITY",
    "--status",
    status,
    "--components",
    COMPONENTS,
  ];
}
