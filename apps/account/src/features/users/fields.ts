/** Length of a generated affiliate code. */
export const AFF_CODE_LENGTH = 8;
