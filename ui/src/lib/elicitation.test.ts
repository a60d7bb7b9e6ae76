import { describe, expect, it } from "vitest";
import { fieldsFromSchema, formToJson, initialValues } from "./elicitation";

const schema = {
  type: "object",
  properties: {
    name: { type: "string", title: "Your name" },
    age: { type: "integer", minimum: 0 },
    ratio: { type: "number" },
    subscribe: { type: "boolean", default: true },
    color: { type: "string", enum: ["red", "green"], enumNames: ["Red", "Green"] },
  },
  required: ["name", "color"],
};

describe("elicitation form", () => {
  it("reads fields and their kinds from the schema", () => {
    const f = fieldsFromSchema(schema);
    expect(f.map((x) => [x.name, x.kind, x.required])).toEqual([
      ["name", "string", true],
      ["age", "integer", false],
      ["ratio", "number", false],
      ["subscribe", "boolean", false],
      ["color", "enum", true],
    ]);
    expect(f[0]!.title).toBe("Your name");
    expect(f[4]!.optionLabels).toEqual(["Red", "Green"]);
  });

  it("starts from defaults (first option for a required enum)", () => {
    const v = initialValues(fieldsFromSchema(schema));
    expect(v).toEqual({ name: "", age: "", ratio: "", subscribe: true, color: "red" });
  });

  it("converts values to typed JSON and leaves out empty optional fields", () => {
    const f = fieldsFromSchema(schema);
    const r = formToJson(f, { name: "Ada", age: "36", ratio: "", subscribe: false, color: "green" });
    expect(r.ok).toBe(true);
    expect(JSON.stringify(r.value)).toBe('{"name":"Ada","age":36,"subscribe":false,"color":"green"}');
  });

  it("reports missing required fields and bad numbers", () => {
    const f = fieldsFromSchema(schema);
    const r = formToJson(f, { name: " ", age: "3.5", ratio: "abc", subscribe: false, color: "blue" });
    expect(r.ok).toBe(false);
    expect(r.errors).toEqual({ name: "Required", age: "Enter a whole number", ratio: "Enter a number", color: "Choose one of the options" });
  });

  it("survives a missing or odd schema", () => {
    expect(fieldsFromSchema(null)).toEqual([]);
    expect(fieldsFromSchema({ properties: "nope" })).toEqual([]);
  });
});
