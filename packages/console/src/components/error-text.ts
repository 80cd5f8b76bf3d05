/**
 * The service's validation wording turned into sentences that name the field, as a form shows
 * them: `name: Too small: expected string to have >=1 characters` is "Name is required",
 * `topK: Too big: expected number to be <=100` is "Top K must be 100 or less", a tool's
 * `args.city must be string` (JSON Schema, checked by ajv) is "city must be text". A reason
 * this does not know is kept as the service worded it, after the field's name.
 */

/** One problem of invalid input: where (the path of its field) and the service's reason. */
export interface Issue {
  readonly path: readonly (string | number)[];
  readonly code?: string | undefined;
  readonly message: string;
}

const TYPES: Readonly<Record<string, string>> = {
  string: 'text',
  number: 'a number',
  int: 'a whole number',
  integer: 'a whole number',
  boolean: 'true or false',
  object: 'an object',
  array: 'a list',
  null: 'empty (null)',
};
const typeName = (type: string) =>
  type
    .split(',')
    .map((t) => TYPES[t.trim()] ?? t.trim())
    .join(' or ');
const UNITS: Readonly<Record<string, string>> = { characters: 'characters', items: 'items', entries: 'entries', bytes: 'bytes' };
/** `"a"|"b"|"c"` (zod's list of allowed values) as `a, b or c`. */
const choices = (list: string) => {
  const values = list.split('|').map((v) => v.trim().replace(/^"(.*)"$/, '$1'));
  return values.length > 1 ? `${values.slice(0, -1).join(', ')} or ${values.at(-1)}` : (values[0] ?? '');
};
const bound = (op: string, n: string, more: boolean) => (op.endsWith('=') ? `${n} or ${more ? 'more' : 'less'}` : `${more ? 'more' : 'less'} than ${n}`);

/** Reasons as zod (en) and ajv word them, each with the end of the sentence that says it plainly. */
const REASONS: readonly [RegExp, (m: RegExpExecArray) => string][] = [
  // zod
  [/^Invalid input: expected \w+, received undefined$/, () => 'is required'],
  [/^Invalid input: expected (\w+), received \w+$/, (m) => `must be ${typeName(m[1] as string)}`],
  [/^Too small: expected \w+ to have >=?1 characters$/, () => 'is required'],
  [/^Too small: expected \w+ to have (>=|>)(\d+) (\w+)$/, (m) => `must have at least ${m[1] === '>' ? Number(m[2]) + 1 : m[2]} ${UNITS[m[3] as string] ?? m[3]}`],
  [/^Too big: expected \w+ to have (<=|<)(\d+) (\w+)$/, (m) => `must have at most ${m[1] === '<' ? Number(m[2]) - 1 : m[2]} ${UNITS[m[3] as string] ?? m[3]}`],
  [/^Too small: expected \w+ to be (>=|>)(\S+)$/, (m) => `must be ${bound(m[1] as string, m[2] as string, true)}`],
  [/^Too big: expected \w+ to be (<=|<)(\S+)$/, (m) => `must be ${bound(m[1] as string, m[2] as string, false)}`],
  [/^Invalid option: expected one of (.+)$/, (m) => `must be one of ${choices(m[1] as string)}`],
  [/^Invalid input: expected (.+)$/, (m) => `must be ${choices(m[1] as string)}`],
  [/^Invalid string: must match pattern .+$/, () => 'has characters or a form that is not allowed'],
  [/^Invalid string: must (start with|end with|include) (.+)$/, (m) => `must ${m[1]} ${m[2]}`],
  [/^Invalid number: must be a multiple of (\S+)$/, (m) => `must be a multiple of ${m[1]}`],
  [/^Invalid (URL|email address|UUID|ISO datetime|ISO date|IPv4 address|IPv6 address)$/, (m) => `must be a valid ${m[1]}`],
  [/^Unrecognized keys?: (.+)$/, (m) => `has a field the service does not know: ${m[1]}`],
  [/^larger than the limit of (\d+) characters$/, (m) => `must have at most ${m[1]} characters`],
  [/^Invalid input$/, () => 'is not valid'],
  // the service's own reasons that start without a verb
  [/^required\b(.*)$/, (m) => `is required${m[1]}`],
  [/^at (most|least) (\d+) (\w+)$/, (m) => `must have at ${m[1]} ${m[2]} ${m[3]}`],
  [/^not (used|allowed|a|an)\b(.*)$/, (m) => `is not ${m[1]}${m[2]}`],
  // ajv (a tool's arguments against its parameters schema)
  [/^must be (string|number|integer|boolean|object|array|null|[\w,]+)$/, (m) => `must be ${typeName(m[1] as string)}`],
  [/^must NOT have additional properties$/, () => 'has a member the schema does not allow'],
  [/^must be equal to one of the allowed values$/, () => 'must be one of the allowed values'],
  [/^must be (>=|>|<=|<) (\S+)$/, (m) => `must be ${bound(m[1] as string, m[2] as string, (m[1] as string).startsWith('>'))}`],
  [/^must NOT have fewer than (\d+) (\w+)$/, (m) => `must have at least ${m[1]} ${m[2]}`],
  [/^must NOT have more than (\d+) (\w+)$/, (m) => `must have at most ${m[1]} ${m[2]}`],
  [/^must match format "(.+)"$/, (m) => `must be a valid ${m[1]}`],
];

/** Words of field names as the console's labels write them. */
const WORDS: Readonly<Record<string, string>> = {
  url: 'URL',
  api: 'API',
  id: 'ID',
  mcp: 'MCP',
  json: 'JSON',
  k: 'K',
  mmr: 'MMR',
  rag: 'RAG',
  min: 'minimum',
  max: 'maximum',
  color: 'colour',
  config: 'configuration',
};

/** A field's name as a label: `baseUrl` → "Base URL", `topK` → "Top K", `minScore` → "Minimum score". */
export function labelOf(field: string): string {
  const words = field
    .replace(/[_-]+/g, ' ')
    .replace(/([a-z0-9])([A-Z])/g, '$1 $2')
    .split(/\s+/)
    .filter(Boolean)
    .map((w) => WORDS[w.toLowerCase()] ?? w.toLowerCase());
  const text = words.join(' ');
  return text.charAt(0).toUpperCase() + text.slice(1);
}

/** What a path names: the label of its last field, with the item of a list (`dependencies.2` → "Dependencies, item 3"). */
function subjectOf(path: readonly (string | number)[]): string {
  const last = path.at(-1);
  if (last === undefined || last === 'body') return 'The request';
  const index = typeof last === 'number' || /^\d+$/.test(String(last)) ? Number(last) : null;
  if (index === null) return labelOf(String(last));
  const owner = path.at(-2);
  return owner === undefined ? `Item ${index + 1}` : `${labelOf(String(owner))}, item ${index + 1}`;
}

/** The end of a sentence for a reason, when it is one we know how to say. */
function plainReason(reason: string): string | undefined {
  for (const [pattern, say] of REASONS) {
    const match = pattern.exec(reason);
    if (match) return say(match);
  }
  return undefined;
}

/** One issue as a sentence naming its field: "Name is required". */
export function issueSentence(issue: Issue): string {
  const subject = subjectOf(issue.path);
  const plain = plainReason(issue.message);
  if (plain) return `${subject} ${plain}`;
  // A reason of the service's own: "must be an http or https URL" reads after the label as it is.
  return /^(must|is|are|has|cannot|can't|should|needs|does)\b/.test(issue.message) ? `${subject} ${issue.message}` : `${subject}: ${issue.message}`;
}

/** A tool argument named by ajv (`args`, `args.city`): the argument's name, or the arguments as a whole. */
function ajvSentence(subject: string, reason: string): string {
  const required = /^must have required property '(.+)'$/.exec(reason);
  if (required) return `${subject === 'args' ? '' : `${subject.replace(/^args\./, '')}.`}${required[1]} is required`;
  const plain = plainReason(reason) ?? reason;
  if (subject !== 'args') return `${subject.replace(/^args\./, '')} ${plain}`;
  return `The arguments ${plain.replace(/^has /, 'have ').replace(/^is /, 'are ')}`;
}

/** A field-like prefix of a message part (`name: `, `settings.chunkSize: `): no spaces, as the service writes paths. */
const FIELD_PART = /^([\w$.[\]]+): (.+)$/s;
const AJV_PART = /^(.*?: )?(args(?:\.[\w$.[\]]+)?) (must .+)$/s;

/**
 * The issues of an error message as the service words them (`field: reason` joined by `; `),
 * for an error whose body carries no `issues`. A part that names no field has an empty path and
 * no code, and is kept as it is.
 */
export function issuesOfMessage(message: string): Issue[] {
  return message.split('; ').map((part) => {
    const field = FIELD_PART.exec(part);
    if (field && !AJV_PART.test(part)) return { path: (field[1] as string).split('.'), message: field[2] as string };
    return { path: [], message: part };
  });
}

/**
 * A message part as a sentence: a field's problem named by its label, an ajv problem by its
 * argument (keeping what comes before it: "Invalid arguments for tool weather: city must be
 * text"), anything else as the service worded it.
 */
export function partSentence(issue: Issue): string {
  if (issue.path.length > 0 || issue.code !== undefined) return issueSentence(issue);
  const ajv = AJV_PART.exec(issue.message);
  if (ajv) return `${ajv[1] ?? ''}${ajvSentence(ajv[2] as string, ajv[3] as string)}`;
  return issue.message;
}
