package syntax

// YAMLTextOf gives tests the offset and lineEnd methods of the table that
// maps go-yaml's line and rune column numbers for the YAML text
// src[start:end].
func YAMLTextOf(src []byte, start, end int) (offset func(line, col int) int, lineEnd func(off int) int, lines int) {
	y := NewYAMLText(src, start, end)
	return y.Offset, y.LineEnd, len(y.lines)
}

// ColStep is how far apart the column marks of long lines are.
const ColStep = colStep
