#!/usr/bin/env node
// Checks generated OpenRPC documents with the OpenRPC project's own tools.
//
//   node check.js validate DOC.json
//     Validates DOC against the official meta-schema (validateOpenRPCDocument
//     of @open-rpc/schema-utils-js) and dereferences every $ref
//     (parseOpenRPCDocument). Prints "ok" or the errors; exit 1 on errors.
//
//   node check.js verdicts DOC.json CASES.json
//     CASES is [{"method": "...", "params": <value>}, ...] ("params" absent
//     when the request has none). For each case prints whether the document
//     says the params are valid: a JSON array of booleans, in order. The
//     verdict follows the method's paramStructure, its content descriptors
//     (required, schema, validated with ajv as JSON Schema draft-07) and the
//     documented extensions x-whole-params and x-allow-extra-params (for a
//     whole-params method, paramStructure still says object or array).

"use strict";

const fs = require("fs");
const Ajv = require("ajv").default;
const { validateOpenRPCDocument, parseOpenRPCDocument } = require("@open-rpc/schema-utils-js");

function readJson(path) {
  return JSON.parse(fs.readFileSync(path, "utf8"));
}

async function validate(path) {
  const doc = readJson(path);
  const result = validateOpenRPCDocument(doc);
  if (result !== true) {
    console.log(result.message || String(result));
    process.exit(1);
  }
  try {
    await parseOpenRPCDocument(JSON.parse(JSON.stringify(doc)));
  } catch (err) {
    console.log(`parseOpenRPCDocument failed: ${err.message || err}`);
    process.exit(1);
  }
  console.log("ok");
}

function verdicts(docPath, casesPath) {
  const doc = readJson(docPath);
  const cases = readJson(casesPath);
  // Formats such as int64 are annotations for ajv, not assertions.
  const ajv = new Ajv({ strict: false, validateFormats: false });
  const compiled = new Map();
  const check = (schema, value) => {
    const key = JSON.stringify(schema);
    if (!compiled.has(key)) {
      compiled.set(key, ajv.compile({ allOf: [schema], components: doc.components }));
    }
    return compiled.get(key)(value);
  };
  const out = cases.map(({ method: name, params }) => {
    const method = doc.methods.find((m) => m.name === name);
    if (!method) throw new Error(`method ${name} is not in the document`);
    if (method["x-whole-params"]) {
      // The one descriptor describes the entire params value, in the shape
      // paramStructure says; absent params decode from null.
      const shape = method.paramStructure || "either";
      if (shape === "by-name" && Array.isArray(params)) return false;
      if (shape === "by-position" && params !== null && typeof params === "object" && !Array.isArray(params)) {
        return false;
      }
      return check(method.params[0].schema, params === undefined ? null : params);
    }
    const extra = method["x-allow-extra-params"] === true;
    const structure = method.paramStructure || "either"; // the OpenRPC default
    const descriptors = method.params;
    if (params === undefined) {
      return descriptors.every((d) => !d.required);
    }
    if (Array.isArray(params)) {
      if (structure === "by-name") return false;
      if (params.length > descriptors.length && !extra) return false;
      return descriptors.every((d, i) => (i < params.length ? check(d.schema, params[i]) : !d.required));
    }
    if (structure === "by-position") return false;
    const names = new Set(descriptors.map((d) => d.name));
    if (!extra && Object.keys(params).some((key) => !names.has(key))) return false;
    return descriptors.every((d) =>
      Object.prototype.hasOwnProperty.call(params, d.name) ? check(d.schema, params[d.name]) : !d.required,
    );
  });
  console.log(JSON.stringify(out));
}

const [mode, ...args] = process.argv.slice(2);
if (mode === "validate" && args.length === 1) {
  validate(args[0]).catch((err) => {
    console.log(String(err));
    process.exit(1);
  });
} else if (mode === "verdicts" && args.length === 2) {
  verdicts(args[0], args[1]);
} else {
  console.error("usage: node check.js validate DOC.json | verdicts DOC.json CASES.json");
  process.exit(2);
}
