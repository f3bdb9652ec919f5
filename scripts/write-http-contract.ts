import { writeFile } from "node:fs/promises";
import { expectedHttpContract, HTTP_CONTRACT_FILE, readHttpContract } from "./http-contract";

await writeFile(HTTP_CONTRACT_FILE, await expectedHttpContract(await readHttpContract()));
console.log(`wrote ${HTTP_CONTRACT_FILE}`);
