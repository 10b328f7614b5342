export interface PackEntry {
  readonly dir: string;
  readonly tarball: string;
  readonly packageDir: string;
  readonly files: readonly string[];
}
export declare function sourceHash(): string;
export declare function pruneUnused(cache: string, keep: string, now?: number): void;
export declare function packOnce(options?: { force?: boolean }): PackEntry;
