// Unit tests of the conversion of friendly run options to ExecutionOptions:
// structured output with every field of the contract, and its mistakes as
// TypeErrors before any call (as the Python client raises).

import assert from "node:assert/strict";
import { describe, it } from "node:test";

import { agentd, executionOptions, type JsonObject, type StructuredOutputOption } from "@agentd/client";

const v1 = agentd.v1;
const city: JsonObject = { type: "object", properties: { city: { type: "string" } }, required: ["city"] };

describe("structured output", () => {
  it("carries every field of the contract", () => {
    const out = executionOptions({
      structuredOutput: {
        schema: city,
        name: "city",
        description: "where",
        errorStrategy: "fallback",
        fallbackValue: { city: "unknown" },
        model: "local/echo",
        instructions: "Extract the city.",
      },
    }).structuredOutput;
    assert.deepEqual(
      out,
      v1.StructuredOutput.fromPartial({
        schema: city,
        name: "city",
        description: "where",
        errorStrategy: v1.StructuredOutputErrorStrategy.STRUCTURED_OUTPUT_ERROR_STRATEGY_FALLBACK,
        fallbackValue: { city: "unknown" },
        model: "local/echo",
        instructions: "Extract the city.",
      }),
    );
    // Encoded, the fallback value survives the wire.
    const decoded = v1.StructuredOutput.decode(v1.StructuredOutput.encode(out!).finish());
    assert.deepEqual(decoded.fallbackValue, { city: "unknown" });
  });

  it("is strict by default and takes warn", () => {
    const strict = executionOptions({ structuredOutput: { schema: city } }).structuredOutput;
    assert.equal(strict?.errorStrategy, v1.StructuredOutputErrorStrategy.STRUCTURED_OUTPUT_ERROR_STRATEGY_STRICT);
    assert.equal(strict?.fallbackValue, undefined);
    const warn = executionOptions({ structuredOutput: { schema: city, errorStrategy: "warn" } }).structuredOutput;
    assert.equal(warn?.errorStrategy, v1.StructuredOutputErrorStrategy.STRUCTURED_OUTPUT_ERROR_STRATEGY_WARN);
  });

  it("refuses an unknown error strategy and a schema that is no object", () => {
    const lenient = { schema: city, errorStrategy: "lenient" } as unknown as StructuredOutputOption;
    assert.throws(() => executionOptions({ structuredOutput: lenient }), {
      name: "TypeError",
      message: 'structuredOutput: errorStrategy is "strict", "warn" or "fallback"',
    });
    const listed = { schema: ["city"] } as unknown as StructuredOutputOption;
    assert.throws(() => executionOptions({ structuredOutput: listed }), /schema is a JSON Schema object/);
  });
});
