package discovery

// AnalyzeWith returns the Facts l gives the file at p of kind k.
func AnalyzeWith(l *Loader, p string, k Kind) *Facts { return l.analyze(p, k) }
