/** JSON text indented for editing in a text area; text that is not JSON comes back as it is. */
export function indentedJson(text: string): string {
  try {
    return JSON.stringify(JSON.parse(text), null, 2);
  } catch {
    return text;
  }
}
