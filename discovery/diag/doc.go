// Package diag is the vocabulary every producer of diagnostics speaks:
// a Diagnostic and its Severity, the Position and Range it points at, the
// registry of diagnostic codes (Codes), the per-file Limit of how many of
// one area are made, and the "did you mean" hints (Suggest, Suggestions).
//
// It is family-neutral: the syntax of documents, their schemas, the model
// of collections, resolution, the checks and any family of documents
// (collections, bundles) make their diagnostics with it. It reads no file
// and knows no document; it imports no other package of this module.
//
// # Concurrency
//
// Values are plain data. Codes is read-only. A Limit serves one file on
// one goroutine; a Suggestions cache is safe for concurrent use.
//
// # Caveats
//
//   - Every Position is 0-based, with the character counted in UTF-16
//     code units, as the Language Server Protocol counts them.
//   - Codes are stable: tools match on them, the README lists them all,
//     and a code is never renamed without the suppression comments and
//     selections that name the old one being told the new one (see
//     CheckCodePattern).
//   - Sort orders diagnostics by path component by component (see
//     ComparePaths), then position, code and message: output is stable.
//   - A Limit makes at most MaxPerArea diagnostics of one area for one
//     file, in the order it is asked, then one CodeTooManyDiagnostics
//     that counts the rest without making them.
package diag
