package prepare

import (
	"bytes"
	"fmt"

	"github.com/amplidex/amplidex/discovery"
	"go.yaml.in/yaml/v3"
)

// parsedDoc is what the manifest loader needs of a parsed document.
type parsedDoc struct {
	path  string
	diags []discovery.Diagnostic
	// root is the front matter mapping; nil when there is none usable.
	root     *yaml.Node
	lines    *discovery.LineIndex
	mentions []discovery.Mention
}

// nodeRange returns where n is written.
func (d *parsedDoc) nodeRange(n *yaml.Node) discovery.Range {
	if n == nil {
		return discovery.Range{}
	}
	// YAML lines and columns are 1-based and count runes; the front matter
	// starts after the opening "---" line, which the offset accounts for.
	off := d.lines.Offset(n.Line, n.Column)
	end := off + len(n.Value)
	if n.Kind != yaml.ScalarNode {
		end = off
	}
	return d.lines.Range(off, min(end, d.lines.LineEnd(n.Line-1)))
}

// parseDoc splits and decodes a bundle manifest or agent. Interim: it reads
// the front matter without validating it.
func parseDoc(path string, src []byte) *parsedDoc {
	d := &parsedDoc{path: path, lines: discovery.NewLineIndex(src)}
	src = bytes.TrimPrefix(src, []byte("\ufeff"))
	start, end, bodyStart := -1, -1, len(src)
	for n := 0; n < d.lines.Lines(); n++ {
		line := bytes.TrimSpace(d.lines.Line(n))
		if start < 0 {
			if len(line) == 0 {
				continue
			}
			if string(line) != "---" {
				break
			}
			start = d.lines.LineStart(n + 1)
			continue
		}
		if string(line) == "---" {
			end = d.lines.LineStart(n)
			bodyStart = d.lines.LineStart(n + 1)
			break
		}
	}
	if start < 0 || end < 0 {
		d.diags = append(d.diags, discovery.Diagnostic{Code: discovery.CodeFrontMatterMissing, Severity: discovery.SeverityError, Path: path, Message: "no front matter"})
		return d
	}
	var doc yaml.Node
	// Pad with newlines so that node lines are lines of the file.
	pad := bytes.Repeat([]byte("\n"), d.lines.Position(start).Line)
	if err := yaml.Unmarshal(append(pad, src[start:end]...), &doc); err != nil {
		d.diags = append(d.diags, discovery.Diagnostic{Code: discovery.CodeFrontMatterSyntax, Severity: discovery.SeverityError, Path: path, Message: fmt.Sprint(err)})
		return d
	}
	if len(doc.Content) == 1 && doc.Content[0].Kind == yaml.MappingNode {
		d.root = doc.Content[0]
	}
	d.mentions = discovery.FindMentions(src, bodyStart, d.lines)
	return d
}
