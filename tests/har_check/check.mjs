// Validates a HAR file against the HAR 1.2 JSON Schema (har-validator); prints the entry count.
import { readFileSync } from "node:fs";
import validator from "har-validator";

const har = JSON.parse(readFileSync(process.argv[2], "utf8"));
try {
  await validator.har(har);
  console.log(JSON.stringify({ valid: true, entries: har.log.entries.length }));
} catch (error) {
  console.log(JSON.stringify({ valid: false, errors: error.errors ?? String(error) }));
  process.exit(1);
}
