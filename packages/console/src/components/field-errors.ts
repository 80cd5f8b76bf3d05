/**
 * The service's 400 message split onto form fields. The service words each problem as
 * `field: reason` (nested fields with dots, `settings.chunkSize: ...`) joined by `; `, and some
 * checks name the field inside the sentence (`Invalid vectorstore configuration: ...`,
 * `chunkOverlap must be smaller than chunkSize`). A part that names no field of the form goes to
 * `form`, shown above the buttons, so no message is ever lost.
 */
export function fieldErrors(message: string, fields: readonly string[], aliases: Readonly<Record<string, string>> = {}): Record<string, string> {
  const out: Record<string, string> = {};
  const add = (field: string, text: string) => {
    out[field] = out[field] ? `${out[field]}; ${text}` : text;
  };
  for (const part of message.split('; ')) {
    const prefix = /^([\w.[\]]+): /.exec(part)?.[1];
    const path = prefix?.split('.') ?? [];
    const named = path.reverse().find((segment) => fields.includes(segment));
    const alias = Object.keys(aliases).find((phrase) => part.toLowerCase().includes(phrase.toLowerCase()));
    const mentioned = fields.find((field) => new RegExp(`\\b${field}\\b`).test(part));
    add(named ?? (alias ? (aliases[alias] as string) : undefined) ?? mentioned ?? 'form', part);
  }
  return out;
}
