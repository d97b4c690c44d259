// Finding the operation a model means among hundreds: search_operations' ranking.
//
// BM25 (MiniSearch) over fields of different worth: the title (or, when a document has none,
// the first sentence of the description), the operation's name, its tags, the literal segments
// of its path, the first paragraph of its description, the names of its arguments and the first
// sentence of each argument's description. Three things are ours, each measured by the retrieval benchmark (pnpm retrieval):
//
// - words as specs write them and as people type them meet: camelCase and snake_case split
//   (`listCoreV1NamespacedPod` is "list core v1 namespaced pod"), HTML and links left out of
//   descriptions, every word reduced to its stem (`stemmer`), so "issues" finds "issue";
// - a thesaurus of the words people use for what APIs name otherwise ("ticket" for issue, "PR"
//   for pull request, "money back" for refund), whose words join the query at a lower weight;
// - the verbs people use read as the kind of operation they mean (make, add, open -> create;
//   get rid of -> delete; show, which -> get and list), and operations of that HTTP method
//   ranked higher;
// - the values in a request (quoted names, addresses, #channels, ABC-123 keys, numbers) left
//   out of what it matches on: "release" in `add the label "release"` names a label;
// - a narrow operation ranked below a broad one: its score divided by the number of words in
//   its name, so `repos/create-fork` outranks
//   `actions/set-private-repo-fork-pr-workflows-settings-repository` for "fork a repo".
import MiniSearch from 'minisearch';
import { stemmer } from 'stemmer';
import { THESAURUS } from './thesaurus.js';
import type { Tool } from './tool.js';

/** A search hit: what a model needs to choose, in few tokens. */
export interface SearchHit {
  name: string;
  method: string;
  path: string;
  title?: string;
  /** The description's first sentence, when it says more than the title (at most 120 characters). */
  summary?: string;
}

interface Indexed {
  id: number;
  title: string;
  name: string;
  tags: string;
  path: string;
  description: string;
  arguments: string;
  argumentText: string;
}

/** Words that say nothing about which operation is meant. */
const STOP_WORDS = new Set([
  'a',
  'an',
  'the',
  'to',
  'of',
  'for',
  'in',
  'on',
  'by',
  'and',
  'or',
  'with',
  'my',
  'me',
  'i',
  'it',
  'its',
  'this',
  'that',
  'these',
  'those',
  'our',
  'we',
  'you',
  'your',
  'from',
  'into',
  'at',
  'as',
  'so',
  'can',
  'do',
  'please',
  'some',
  'all',
  'every',
  'one',
  'new',
]);

export const DEFAULT_SEARCH_RESULTS = 8;
const SUMMARY_LIMIT = 120;
/** Weight of a word the thesaurus added, next to 1 for a word the caller typed. */
const THESAURUS_WEIGHT = 0.6;
/** How much higher an operation of the HTTP method the query's verb means ranks. */
const METHOD_BOOST = 1.6;

/**
 * How broad an operation is, to multiply its score by: 1 over the number of words in its name
 * (`reply_to_email` has two). A name that takes eight words to say what it does names something
 * narrower than one that takes two, and people ask for the broad ones far more often.
 * Measured (pnpm retrieval): recall@5 0.62 -> 0.70 and MRR 0.46 -> 0.50 on the 377 tasks (the
 * held-out third 0.63 -> 0.67), 0.45 -> 0.50 and 0.33 -> 0.36 on the blind 150; better in every
 * API. 1/(1 + k x words) for k from 0.25 to 3 scored within 0.02.
 */
function breadthOf(tool: Tool): number {
  // Without the upstream's prefix a gateway of several gives its tools (`github.repos_get`).
  const prefix = tool.binding.upstream === undefined ? '' : `${tool.binding.upstream}.`;
  const name = prefix && tool.name.startsWith(prefix) ? tool.name.slice(prefix.length) : tool.name;
  return 1 / Math.max(1, splitWords(name).filter((w) => !STOP_WORDS.has(w)).length);
}

/** `listCoreV1Pod`, `conversations_setPurpose`, `<p>Creates a <a href=...>charge</a></p>` -> words. */
export function splitWords(text: string): string[] {
  return text
    .replace(/<[^>]*>/g, ' ')
    .replace(/\]\([^)]*\)/g, ' ')
    .replace(/https?:\/\/\S+/g, ' ')
    .replace(/([a-z0-9])([A-Z])/g, '$1 $2')
    .replace(/([A-Z]+)([A-Z][a-z])/g, '$1 $2')
    .toLowerCase()
    .split(/[^a-z0-9]+/)
    .filter((w) => w.length > 0);
}

const termOf = (word: string): string | null => (STOP_WORDS.has(word) ? null : stemmer(word));

/** The first paragraph of a text, with its markup left out. */
function plainParagraph(text: string): string {
  const plain = text
    .replace(/<[^>]*>/g, '')
    .replace(/\[([^\]]*)\]\([^)]*\)/g, '$1')
    .trim();
  return (plain.split(/\n\s*\n/)[0] ?? '').replace(/\s+/g, ' ').trim();
}

/** The sentences of a paragraph (cut after . ! ? and a space). */
const sentencesOf = (paragraph: string) => paragraph.split(/(?<=[.!?])\s+/).filter((s) => s.length > 0);

/** A description that is only the operation's method and path (as Twilio's are) says nothing. */
const meaningful = (text: string, tool: Tool) =>
  /[a-z]/i.test(text.replace(tool.binding.path, '').replace(tool.binding.method, ''));

const bare = (text: string) => text.toLowerCase().replace(/[.\s]+$/, '');

/** What the operation does in one sentence: the description's first that is not the title again. */
function summaryOf(tool: Tool): string | undefined {
  const paragraph = plainParagraph(tool.description);
  if (!meaningful(paragraph, tool)) return undefined;
  const title = bare(tool.title ?? '');
  const sentence = sentencesOf(paragraph).find((s) => bare(s) !== title);
  if (sentence === undefined) return undefined;
  if (sentence.length <= SUMMARY_LIMIT) return sentence;
  const cut = sentence.slice(0, SUMMARY_LIMIT);
  const space = cut.lastIndexOf(' ');
  return `${(space > SUMMARY_LIMIT / 2 ? cut.slice(0, space) : cut).trimEnd()}…`;
}

function documentOf(tool: Tool, id: number): Indexed {
  const paragraph = plainParagraph(tool.description);
  const said = meaningful(paragraph, tool);
  const properties = tool.inputSchema.properties;
  return {
    id,
    // A document without titles has its description's first sentence read as one.
    title: tool.title ?? (said ? (sentencesOf(paragraph)[0] ?? '') : ''),
    name: tool.name,
    tags: tool.source.tags.join(' '),
    // Literal segments only: `{owner}` and `{repo}` are in every GitHub path and say nothing.
    path: tool.binding.path.replace(/\{[^}]*\}/g, ' '),
    description: said ? paragraph : '',
    arguments: properties && typeof properties === 'object' ? Object.keys(properties).join(' ') : '',
    argumentText: properties && typeof properties === 'object' ? argumentText(properties) : '',
  };
}

/** The longest part of one argument's description that is indexed. */
const ARGUMENT_SENTENCE_LIMIT = 200;

/**
 * What the arguments say they are, one sentence each: where a spec keeps what an operation is
 * for ("Unschedulable controls node schedulability of new pods", "The ID of the Customer this
 * PaymentMethod is saved to"). Measured (pnpm retrieval, 2026-12-07): recall@5 / MRR on the
 * blind 150 0.50 / 0.36 -> 0.53 / 0.38, on the 377 0.70 / 0.50 -> 0.70 / 0.52; weights 0.6 to
 * 1.5 within 0.01 of each other, whole descriptions and nested properties no better.
 */
function argumentText(properties: object): string {
  const said: string[] = [];
  for (const property of Object.values(properties)) {
    const description = (property as { description?: unknown } | null)?.description;
    if (typeof description !== 'string') continue;
    const sentence = sentencesOf(plainParagraph(description))[0];
    if (sentence) said.push(sentence.slice(0, ARGUMENT_SENTENCE_LIMIT));
  }
  return said.join(' ');
}

/** A group of operations to browse: the spec's first tag of each, or the first segment of its path. */
export interface OperationGroup {
  name: string;
  operations: number;
  /** The titles (or names) of its first few operations: what the group is about, in few tokens. */
  examples: string[];
}

/** How many example titles a group shows. */
const GROUP_EXAMPLES = 3;

/** Path segments that name no group: versions (`v1`, `2010-04-01`) and `api`. */
const NOT_A_GROUP = /^(v\d+(\.\d+)*|\d[\d.-]*|api|rest)$/i;

/**
 * An operation's group: its first tag, else the first literal segment of its path that is not a
 * version or `api` (Stripe's untagged `/v1/customers/...` is "customers"), else "other".
 */
export function groupOf(tool: Tool): string {
  const tag = tool.source.tags[0]?.trim();
  if (tag) return tag;
  const segment = tool.binding.path
    .split('/')
    .find((s) => s !== '' && !s.startsWith('{') && !s.includes('{') && !NOT_A_GROUP.test(s));
  return segment?.replace(/\.json$/, '') ?? 'other';
}

/** The operations a dynamic gateway serves, searchable by words and browsable by group. */
export class OperationIndex {
  readonly #tools: readonly Tool[];
  readonly #search: MiniSearch<Indexed>;
  readonly #groups: string[];
  readonly #breadth: number[];

  constructor(tools: readonly Tool[]) {
    this.#tools = tools;
    this.#groups = tools.map(groupOf);
    this.#breadth = tools.map(breadthOf);
    this.#search = new MiniSearch<Indexed>({
      fields: ['title', 'name', 'tags', 'path', 'description', 'arguments', 'argumentText'],
      tokenize: splitWords,
      processTerm: termOf,
      searchOptions: {
        // Every boost must be above 0: MiniSearch reads a 0 as 1 (`boost[field] || 1`).
        boost: { title: 4, name: 2, tags: 1.5, path: 1, description: 0.5, arguments: 0.3, argumentText: 1 },
        prefix: (term) => term.length > 4,
        fuzzy: (term) => (term.length > 6 ? 0.15 : false),
        combineWith: 'OR',
      },
    });
    this.#search.addAll(tools.map(documentOf));
  }

  /**
   * The best matches, only among the tools `visible` allows (those the caller may call), and
   * only in `group` when one is given.
   */
  search(
    query: string,
    limit = DEFAULT_SEARCH_RESULTS,
    visible?: (tool: Tool) => boolean,
    group?: string | undefined,
  ): SearchHit[] {
    const { terms, weights, methods } = understand(query);
    if (terms.length === 0) return [];
    return this.#search
      .search(terms.join(' '), {
        tokenize: (text) => text.split(' '),
        processTerm: (term) => term,
        boostTerm: (term) => weights.get(term) ?? 1,
        boostDocument: (id) =>
          (this.#breadth[id as number] as number) *
          (methods.has((this.#tools[id as number] as Tool).binding.method) ? METHOD_BOOST : 1),
        ...(group === undefined ? {} : { filter: (hit) => this.#groups[hit.id as number] === group }),
      })
      .map((hit) => this.#tools[hit.id as number] as Tool)
      .filter((tool) => visible === undefined || visible(tool))
      .slice(0, limit)
      .map(hitOf);
  }

  /** The groups, in the order the spec first names them, with what the caller may call in each. */
  groups(visible?: (tool: Tool) => boolean): OperationGroup[] {
    const groups = new Map<string, OperationGroup>();
    this.#tools.forEach((tool, i) => {
      if (visible && !visible(tool)) return;
      const name = this.#groups[i] as string;
      let group = groups.get(name);
      if (!group) {
        group = { name, operations: 0, examples: [] };
        groups.set(name, group);
      }
      group.operations++;
      if (group.examples.length < GROUP_EXAMPLES) group.examples.push(tool.title ?? tool.name);
    });
    return [...groups.values()];
  }

  /** A group's operations in the spec's order, at most `limit`, and how many it has in all. */
  inGroup(
    group: string,
    limit = DEFAULT_SEARCH_RESULTS,
    visible?: (tool: Tool) => boolean,
  ): { hits: SearchHit[]; total: number } | undefined {
    const members = this.#tools.filter((tool, i) => this.#groups[i] === group && (!visible || visible(tool)));
    if (members.length === 0) return undefined;
    return { hits: members.slice(0, limit).map(hitOf), total: members.length };
  }
}

function hitOf(tool: Tool): SearchHit {
  const summary = summaryOf(tool);
  return {
    name: tool.name,
    method: tool.binding.method,
    path: tool.binding.path,
    ...(tool.title ? { title: tool.title } : {}),
    ...(summary ? { summary } : {}),
  };
}

/**
 * A query without the values in it, which name things rather than say what to do: quoted
 * text, e-mail addresses, URLs, #channels and #numbers, keys like ABC-123, versions, numbers.
 */
function withoutValues(query: string): string {
  return query
    .replace(/(^|\s)(['"‘“])[^'"’”]*['"’”]/g, ' ')
    .replace(/\S+@\S+/g, ' ')
    .replace(/https?:\/\/\S+/g, ' ')
    .replace(/#[\w-]+/g, ' ')
    .replace(/\b[A-Z][A-Z0-9]+-\d+\b/g, ' ')
    .replace(/\bv?\d+(\.\d+)*\b/g, ' ');
}

/**
 * What a person's wording says: its words as stems, the thesaurus's words for them (weighted
 * lower), and the HTTP methods the kind of operation it asks for has.
 */
function understand(query: string): { terms: string[]; weights: Map<string, number>; methods: Set<string> } {
  const said = withoutValues(query);
  const text = said.toLowerCase();
  const weights = new Map<string, number>();
  const typed = splitWords(said)
    .map(termOf)
    .filter((t): t is string => t !== null);
  for (const t of typed) weights.set(t, 1);
  const add = (words: string, weight: number) => {
    for (const w of splitWords(words)) {
      const t = termOf(w);
      if (t !== null && !weights.has(t)) weights.set(t, weight);
    }
  };
  for (const entry of THESAURUS) {
    if (entry.when.test(text)) add(entry.means, THESAURUS_WEIGHT);
  }
  // The verb said first is the one that says what to do: "delete a label from an issue".
  const intent = INTENTS.map((i) => ({ i, at: text.search(i.words) }))
    .filter((m) => m.at >= 0)
    .sort((a, b) => a.at - b.at)[0]?.i;
  if (intent) add(intent.add, THESAURUS_WEIGHT);
  const methods = new Set<string>(intent?.methods ?? []);
  return { terms: [...weights.keys()], weights, methods };
}

/**
 * The verbs people use mapped to the ones specs use, and the HTTP methods such operations
 * have. Nouns that are also verbs ("issue", "post", "file", "log") count as verbs only before
 * an article: "file a bug", not "the file".
 */
const INTENTS: Array<{ words: RegExp; add: string; methods: string[] }> = [
  {
    words:
      /\b(make|new|add|open|start|spin|set up|register|draft|launch|send|upload|invite|generate|create|sign up|save|store|put|(file|log|post|issue|raise) an?)\b/,
    add: 'create',
    methods: ['POST', 'PUT'],
  },
  {
    words:
      /\b(remove|delete|erase|wipe|kill|drop|get rid|nuke|tear down|revoke|purge|uninstall|destroy|strip|unlink)\b/,
    add: 'delete',
    methods: ['DELETE'],
  },
  {
    words: /\b(change|edit|modify|rename|update|tweak|fix|set|bump|switch|move|mark|turn)\b/,
    add: 'update',
    methods: ['PATCH', 'PUT', 'POST'],
  },
  {
    words: /\b(show|see|list|which|what|who|find|look|view|read|get|fetch|how many|how much|is|are|did|was|check)\b/,
    add: 'get list',
    methods: ['GET'],
  },
];
