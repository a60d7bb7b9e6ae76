// MCP elicitation: a server asks the user to fill a flat form described by a JSON
// schema (string / number / integer / boolean / enum properties). We turn the schema into
// fields and the user's input back into the JSON object the server expects.

import type { JsonValue } from "../protocol";

/** A JSON object of the schema (the schema is the server's JSON, not a protocol type). */
type JsonMap = { [key in string]?: JsonValue };

function mapOf(v: JsonValue | undefined): JsonMap | null {
  return typeof v === "object" && v !== null && !Array.isArray(v) ? v : null;
}

export type FieldKind = "string" | "number" | "integer" | "boolean" | "enum";

export interface Field {
  name: string;
  kind: FieldKind;
  title: string;
  description: string;
  required: boolean;
  options: string[];
  optionLabels: string[];
  default: string | boolean | null;
  format: string | null;
}

export function fieldsFromSchema(schema: JsonValue | undefined): Field[] {
  const s = mapOf(schema);
  const props = mapOf(s?.["properties"]);
  if (!props) return [];
  const required = new Set(
    Array.isArray(s?.["required"]) ? (s!["required"] as JsonValue[]).filter((x): x is string => typeof x === "string") : [],
  );
  const fields: Field[] = [];
  for (const [name, raw] of Object.entries(props)) {
    const p = mapOf(raw);
    if (!p) continue;
    const type = typeof p["type"] === "string" ? (p["type"] as string) : "string";
    const enumVals = Array.isArray(p["enum"]) ? (p["enum"] as JsonValue[]).map((v) => String(v)) : null;
    const oneOf = Array.isArray(p["oneOf"])
      ? (p["oneOf"] as JsonValue[]).map(mapOf).filter((o): o is NonNullable<typeof o> => o != null && "const" in o)
      : null;
    let kind: FieldKind;
    let options: string[] = [];
    let optionLabels: string[] = [];
    if (enumVals) {
      kind = "enum";
      options = enumVals;
      const names = Array.isArray(p["enumNames"]) ? (p["enumNames"] as JsonValue[]).map(String) : null;
      optionLabels = names && names.length === options.length ? names : options;
    } else if (oneOf && oneOf.length) {
      kind = "enum";
      options = oneOf.map((o) => String(o["const"]));
      optionLabels = oneOf.map((o) => (typeof o["title"] === "string" ? (o["title"] as string) : String(o["const"])));
    } else if (type === "boolean") kind = "boolean";
    else if (type === "integer") kind = "integer";
    else if (type === "number") kind = "number";
    else kind = "string";
    const d = p["default"];
    fields.push({
      name,
      kind,
      title: typeof p["title"] === "string" ? (p["title"] as string) : name,
      description: typeof p["description"] === "string" ? (p["description"] as string) : "",
      required: required.has(name),
      options,
      optionLabels,
      default: typeof d === "boolean" ? d : d == null ? null : String(d),
      format: typeof p["format"] === "string" ? (p["format"] as string) : null,
    });
  }
  return fields;
}

export type FormValues = Record<string, string | boolean>;

export function initialValues(fields: Field[]): FormValues {
  const v: FormValues = {};
  for (const f of fields) {
    if (f.kind === "boolean") v[f.name] = f.default === true || f.default === "true";
    else v[f.name] = f.default == null ? (f.kind === "enum" && f.required ? (f.options[0] ?? "") : "") : String(f.default);
  }
  return v;
}

export interface FormResult {
  ok: boolean;
  errors: Record<string, string>;
  value: Record<string, JsonValue>;
}

/** Validates and converts the form's strings to the schema's types. Empty optional fields are left out. */
export function formToJson(fields: Field[], values: FormValues): FormResult {
  const errors: Record<string, string> = {};
  const value: Record<string, JsonValue> = {};
  for (const f of fields) {
    const raw = values[f.name];
    if (f.kind === "boolean") {
      value[f.name] = raw === true;
      continue;
    }
    const text = typeof raw === "string" ? raw.trim() : "";
    if (text === "") {
      if (f.required) errors[f.name] = "Required";
      continue;
    }
    if (f.kind === "number" || f.kind === "integer") {
      const n = Number(text);
      if (!Number.isFinite(n)) errors[f.name] = "Enter a number";
      else if (f.kind === "integer" && !Number.isInteger(n)) errors[f.name] = "Enter a whole number";
      else value[f.name] = n;
    } else if (f.kind === "enum") {
      if (!f.options.includes(text)) errors[f.name] = "Choose one of the options";
      else value[f.name] = text;
    } else {
      value[f.name] = typeof raw === "string" ? raw : "";
    }
  }
  return { ok: Object.keys(errors).length === 0, errors, value };
}
