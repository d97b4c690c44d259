// Types for mutation-parts.mjs (plain JavaScript: the Stryker configs that import it are).

export declare const FROM: string;
export declare const TO: string;

/**
 * Every marked part of `file` (a path from the folder of `configUrl`) as Stryker's
 * `file:first-last`; throws when the file has none or a marker is unpaired.
 */
export declare function markedParts(configUrl: string | URL, file: string): string[];

/**
 * Loads a package's Stryker config, checks every file it names exists, and gives the file of each
 * marked part, in order.
 */
export declare function markedFilesOf(configUrl: string | URL): Promise<string[]>;
