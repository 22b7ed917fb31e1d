import type { ReactNode } from 'react';

/**
 * The little Markdown the document's descriptions use: paragraphs, `-` lists, `code`, **bold**
 * and [links](...). Built as elements, never as HTML: nothing in the document can inject markup.
 */
export function Markdown({ text }: { text: string | undefined }) {
  if (!text) return null;
  const blocks = text.split(/\n{2,}/);
  return (
    <>
      {blocks.map((block, i) => {
        const lines = block.split('\n');
        if (lines[0]?.startsWith('- ')) {
          // A list item's continuation lines are indented; they join the item.
          const items = block.split(/\n(?=- )/).map((item) => item.replace(/^- /, '').replace(/\n\s+/g, ' '));
          return (
            <ul key={i}>
              {items.map((item, j) => (
                <li key={j}>{inline(item)}</li>
              ))}
            </ul>
          );
        }
        return <p key={i}>{inline(block.replace(/\n/g, ' '))}</p>;
      })}
    </>
  );
}

const INLINE = /`([^`]+)`|\*\*([^*]+)\*\*|\[([^\]]+)\]\(([^)\s]+)\)/g;

function inline(text: string): ReactNode[] {
  const out: ReactNode[] = [];
  let last = 0;
  for (const m of text.matchAll(INLINE)) {
    out.push(text.slice(last, m.index));
    const [, code, bold, label, href] = m;
    if (code !== undefined) out.push(<code key={m.index}>{code}</code>);
    else if (bold !== undefined) out.push(<strong key={m.index}>{bold}</strong>);
    // Only the web's own schemes and the page's anchors: a `javascript:` link stays text.
    else if (href && /^(https?:|#|\/)/.test(href))
      out.push(
        <a key={m.index} href={href}>
          {label}
        </a>,
      );
    else out.push(label);
    last = m.index + m[0].length;
  }
  out.push(text.slice(last));
  return out;
}
