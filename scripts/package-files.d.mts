export declare const DIST_FILES: readonly string[];
export declare const SHIPPED_FOLDERS: ReadonlyArray<readonly [folder: string, ext: string]>;
export declare function expectedPackageFiles(root: string): string[];
