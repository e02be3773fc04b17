/**
 * The form in which two e-mails are compared for uniqueness: Unicode NFC, then lower case (Unicode's
 * full, locale-independent mapping), so that `ALICE@example.com` and the decomposed `josé@…` are
 * taken when `alice@example.com` and the composed `josé@…` are. The e-mail itself is stored as given.
 * The stores' SQL does the same beside their migrations (packages/users/migrations).
 */
export const emailKey = (email: string): string => email.normalize('NFC').toLowerCase();
