type Align = "left" | "right";

/** Pipes and newlines inside a cell would break the row. */
function cell(text: string): string {
  return text.replace(/\|/g, "\\|").replace(/\r?\n/g, " ");
}

/** A GitHub-flavoured Markdown table, one string per line. */
export function markdownTableLines(
  header: readonly string[],
  rows: readonly (readonly string[])[],
  align?: readonly Align[],
): string[] {
  const rule = header.map((_, i) => (align?.[i] === "right" ? "---:" : "---"));
  return [
    `| ${header.map(cell).join(" | ")} |`,
    `| ${rule.join(" | ")} |`,
    ...rows.map((r) => `| ${r.map(cell).join(" | ")} |`),
  ];
}

/** The same table as one string ending in a newline. */
export function markdownTable(
  header: readonly string[],
  rows: readonly (readonly string[])[],
  align?: readonly Align[],
): string {
  return `${markdownTableLines(header, rows, align).join("\n")}\n`;
}
