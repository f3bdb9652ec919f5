export declare function installSkewedDate(skewMs: number): void;
