package discovery

// AnalyzeWith returns the Facts l gives the file at p of kind k.
func AnalyzeWith(l *Loader, p string, k Kind) *Facts { return l.analyze(p, k) }

// AnalyzeBytes returns the Facts l gives the file at p of kind k whose
// bytes are src, as it analyzes files it reads (its node slabs reused).
func AnalyzeBytes(l *Loader, p string, src []byte, k Kind) *Facts { return l.analyzeFile(p, src, k) }

// JoinName is joinName, for the test that holds it to filepath.Join.
func JoinName(dir, name string) string { return joinName(dir, name) }

// Blocks returns the binary form of a brief profile's session and
// exclude blocks that f keeps (see Facts.ProfileBlocks).
func Blocks(f *Facts) string { return f.blocks }
