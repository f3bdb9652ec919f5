/**
 * An RFC 4180 reader for the export's tests, written apart from the writer so a quoting bug in one
 * is not hidden by the same bug in the other: quoted cells may hold commas, doubled quotes and line
 * breaks; records end with CRLF (or LF); anything after a closing quote but a separator is an error.
 */
export function parseCsv(text: string): string[][] {
  const records: string[][] = [];
  let record: string[] = [];
  let cell = "";
  let index = 0;
  let isQuoted = false;
  let isCellStarted = false;
  const endCell = () => {
    record.push(cell);
    cell = "";
    isCellStarted = false;
  };
  while (index < text.length) {
    const char = text[index] as string;
    if (isQuoted) {
      if (char === '"' && text[index + 1] === '"') {
        cell += '"';
        index += 2;
      } else if (char === '"') {
        isQuoted = false;
        index += 1;
        const next = text[index];
        if (next !== undefined && next !== "," && next !== "\r" && next !== "\n") {
          throw new Error(`characters after a closing quote at ${index}`);
        }
      } else {
        cell += char;
        index += 1;
      }
      continue;
    }
    if (char === '"') {
      if (isCellStarted || cell !== "")
        throw new Error(`a quote inside an unquoted cell at ${index}`);
      isQuoted = true;
      isCellStarted = true;
      index += 1;
    } else if (char === ",") {
      endCell();
      index += 1;
    } else if (char === "\r" || char === "\n") {
      endCell();
      records.push(record);
      record = [];
      index += char === "\r" && text[index + 1] === "\n" ? 2 : 1;
    } else {
      cell += char;
      isCellStarted = true;
      index += 1;
    }
  }
  if (isQuoted) throw new Error("the text ends inside a quoted cell");
  if (isCellStarted || record.length > 0) {
    endCell();
    records.push(record);
  }
  return records;
}
