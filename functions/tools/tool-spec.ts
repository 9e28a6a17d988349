/**
 * The engine-facing description of a configured look-up tool: its name, the description telling the
 * model when to use it and what to collect first, and a JSON-schema input with one required string
 * per variable.
 */
import type { ToolInputSchema, ToolSpec } from "#functions/agent/engine";
import type { ConfiguredTool } from "#functions/tools/registry";
import { schemaHints } from "#functions/tools/variables";

export function toToolSpec(tool: ConfiguredTool): ToolSpec {
  const properties: ToolInputSchema["properties"] = {};
  for (const variable of tool.variables) {
    properties[variable.name] = {
      type: "string",
      description: `The visitor's ${variable.label}. ${variable.description}`,
      ...schemaHints(variable.kind),
    };
  }
  return {
    name: tool.name,
    description: tool.description,
    inputSchema: {
      type: "object",
      properties,
      required: tool.variables.map((v) => v.name),
      additionalProperties: false,
    },
  };
}
