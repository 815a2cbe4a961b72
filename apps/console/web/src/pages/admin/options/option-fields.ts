import { indentedJson } from '../../../lib/json';
import { OPTION_KEYS, type OptionKey } from '@modelgate/schemas/options';

/**
 * How the Options page edits each option (docs/api.md 3.4). The service validates every value and
 * answers 400 with the reason; these only pick the control and say what the option does.
 */
export type OptionControl =
  /** An integer amount of quota: the USD it is worth is shown beside it. */
  | 'quota'
  | 'integer'
  | 'decimal'
  | 'boolean'
  | 'text'
  /** A JSON object (name -> number, or ModelRatioTiers' model -> tiers), edited as JSON text. */
  | 'ratio-map'
  /** Write-only: GET /api/option leaves it out, so it is never shown back. */
  | 'secret';

export const OPTION_SECTIONS = ['Money and prices', 'Relay', 'Accounts', 'Single sign-on', 'Mail', 'Stripe top-ups'] as const;
export type OptionSection = (typeof OPTION_SECTIONS)[number];

export interface OptionField {
  section: OptionSection;
  control: OptionControl;
  description: string;
}

export const OPTION_FIELDS: Record<OptionKey, OptionField> = {
  QuotaPerUnit: {
    section: 'Money and prices',
    control: 'integer',
    description: 'Quota units in USD 1. Top-ups credit amount × this, and balances are shown in USD with it; changing it changes what every balance is worth.',
  },
  ModelRatio: {
    section: 'Money and prices',
    control: 'ratio-map',
    description: 'Model → input price as a ratio (1 = USD 2 per 1M tokens). A model not listed is refused. Easier to edit on the Prices page.',
  },
  CompletionRatio: { section: 'Money and prices', control: 'ratio-map', description: 'Model → output price as a multiple of the input price (1 when not listed).' },
  CacheRatio: { section: 'Money and prices', control: 'ratio-map', description: 'Model → cached input price as a multiple of the input price (1 when not listed).' },
  CacheCreationRatio: {
    section: 'Money and prices',
    control: 'ratio-map',
    description: 'Model → cache-write price as a multiple of the input price (when not listed: 1.25 for claude-* models, else 1).',
  },
  ModelRatioTiers: {
    section: 'Money and prices',
    control: 'ratio-map',
    description:
      'Model → long-context tiers [{"above_prompt_tokens": 200000, "model_ratio": 3, "completion_ratio": 3.75}]: a call whose prompt exceeds a threshold is priced whole at the highest tier it reaches.',
  },
  ModelPrice: {
    section: 'Money and prices',
    control: 'ratio-map',
    description:
      'Model → USD per unit for images, speech, transcriptions and rerank (per image, 1,000 characters, minute of audio or request), used when a call reports no tokens. A model with neither this nor a ModelRatio is refused. Easier to edit on the Prices page.',
  },
  ToolPrice: {
    section: 'Money and prices',
    control: 'ratio-map',
    description: 'Server tool → USD per call (web_search, googleSearch …), on top of the tokens. A request offering a server tool not listed is refused.',
  },
  GroupRatio: { section: 'Money and prices', control: 'ratio-map', description: 'User group → multiplier on every price (1 for a group not listed).' },
  RetryTimes: {
    section: 'Relay',
    control: 'integer',
    description: 'Extra attempts on other channels when a call fails before anything was sent to the client (0 to 10).',
  },
  RegisterEnabled: { section: 'Accounts', control: 'boolean', description: 'Whether people may create their own account on the sign-in page.' },
  QuotaForNewUser: { section: 'Accounts', control: 'quota', description: 'Quota every new account starts with.' },
  QuotaForInviter: { section: 'Accounts', control: 'quota', description: 'Quota added to an inviter’s affiliate balance for each account created with their link.' },
  QuotaForInvitee: { section: 'Accounts', control: 'quota', description: 'Extra quota for an account created with an invitation link.' },
  StripeApiSecret: { section: 'Stripe top-ups', control: 'secret', description: 'Stripe secret API key (sk_…), used to create checkout sessions.' },
  StripeWebhookSecret: {
    section: 'Stripe top-ups',
    control: 'secret',
    description: 'Signing secret (whsec_…) of the Stripe webhook endpoint that points at /api/stripe/webhook.',
  },
  StripePriceId: { section: 'Stripe top-ups', control: 'text', description: 'Stripe price (price_…) of one top-up unit (USD 1 of quota).' },
  StripeUnitPrice: { section: 'Stripe top-ups', control: 'decimal', description: 'What one unit costs in the checkout currency, for the amounts shown in top-up history.' },
  StripeMinTopUp: { section: 'Stripe top-ups', control: 'integer', description: 'The smallest top-up, in units (USD).' },
  ServerAddress: {
    section: 'Accounts',
    control: 'text',
    description:
      'The address people reach the gateway at (https://gateway.example.com, no trailing slash). Every link the gateway builds starts with it, such as the pages Stripe sends payers back to.',
  },
  SMTPServer: { section: 'Mail', control: 'text', description: 'Host name of the SMTP server that sends password resets, verification codes and balance warnings. Empty: no mail is sent.' },
  SMTPPort: { section: 'Mail', control: 'integer', description: 'Port of the SMTP server: usually 587 (STARTTLS) or 465 (TLS).' },
  SMTPAccount: { section: 'Mail', control: 'text', description: 'User name for the SMTP server; empty to send without signing in.' },
  SMTPToken: { section: 'Mail', control: 'secret', description: 'Password or app token for the SMTP account.' },
  SMTPFrom: { section: 'Mail', control: 'text', description: 'Sender address of every mail (noreply@example.com); the SMTP account when empty.' },
  SMTPSSLEnabled: { section: 'Mail', control: 'boolean', description: 'TLS from the first byte (port 465). Off: STARTTLS whenever the server offers it.' },
  EmailVerificationEnabled: {
    section: 'Accounts',
    control: 'boolean',
    description: 'New accounts must give an email address and the 6-digit code mailed to it. Needs the Mail settings.',
  },
  OIDCEnabled: { section: 'Single sign-on', control: 'boolean', description: 'Show “Sign in with SSO” on the sign-in page, using the OpenID provider below.' },
  OIDCIssuer: {
    section: 'Single sign-on',
    control: 'text',
    description: 'Issuer URL of the OpenID provider (Okta, Entra ID, Google, Keycloak …); its discovery document is read from {issuer}/.well-known/openid-configuration.',
  },
  OIDCClientId: { section: 'Single sign-on', control: 'text', description: 'Client id of the gateway at the provider. Its redirect URI there is {Server address}/api/oauth/oidc/callback.' },
  OIDCClientSecret: { section: 'Single sign-on', control: 'secret', description: 'Client secret of the gateway at the provider.' },
  GroupRateLimit: {
    section: 'Relay',
    control: 'ratio-map',
    description:
      'User group → limits for each user of the group: {"rpm": requests per minute, "tpm": tokens per minute, "concurrency": requests in flight}; 0 or absent = none. Keys have their own limits too.',
  },
  WebhookAllowPrivate: {
    section: 'Accounts',
    control: 'boolean',
    description: 'Allow low-balance webhooks to private and loopback addresses (only for gateways whose users are all trusted).',
  },
  LogRetentionDays: {
    section: 'Accounts',
    control: 'integer',
    description:
      'Days of usage log kept (0 = all). Once a whole month is older, its rows are deleted and each user gets one row carrying their net amount; the dashboard’s usage totals stay.',
  },
};

/** The keys of a section, in the order of the schema's definitions. */
export function optionKeysOf(section: OptionSection): OptionKey[] {
  return OPTION_KEYS.filter((key) => OPTION_FIELDS[key].section === section);
}

/** A stored ratio map as indented JSON for its text area; other text as it is. */
export function editableText(control: OptionControl, stored: string): string {
  return control === 'ratio-map' ? indentedJson(stored) : stored;
}
