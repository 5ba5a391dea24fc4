// Bundles src/live.ts with the ext-apps SDK into one HTML file the Python package ships
// (webmcp_nb/mcp/static/live.html): no CDN, no network at run time. `node build.mjs --check`
// fails if the committed file is not what the sources build to. Test hosts under
// tests/app_host/ are bundled the same way (`node build.mjs host <entry> <template> <out>`).
import { build } from "esbuild";
import { readFileSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));

async function bundle(entry, template) {
  const result = await build({
    entryPoints: [entry],
    bundle: true,
    format: "esm",
    minify: true,
    write: false,
    target: "es2022",
    legalComments: "none",
    nodePaths: [join(here, "node_modules")], // test hosts under tests/ use this folder's packages
    logLevel: "warning",
  });
  const code = result.outputFiles[0].text.replaceAll("</script", "<\\/script");
  return readFileSync(template, "utf8").replace("/*BUNDLE*/", () => code);
}

const [mode, ...rest] = process.argv.slice(2);
if (mode === "host") {
  const [entry, template, out] = rest;
  writeFileSync(out, await bundle(entry, template));
} else {
  const out = join(here, "..", "webmcp_nb", "mcp", "static", "live.html");
  const html = await bundle(join(here, "src", "live.ts"), join(here, "src", "live.html"));
  if (mode === "--check") {
    if (readFileSync(out, "utf8") !== html) {
      console.error(`${out} is not what app/src builds to: run make app`);
      process.exit(1);
    }
  } else {
    writeFileSync(out, html);
  }
}
