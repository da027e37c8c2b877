// Package schema knows what each kind of document may hold, and checks a
// document against it: the front matter of profiles, agents, bundles and
// bundle agents (a table of shapes per DocKind), and the keys and value
// rules of a collection's pyproject.toml. ParseDocument parses a
// front-matter document and validates it; Keys, Key and Placeholder
// describe the schemas to an editor; JSON writes them as JSON Schema.
//
// A family of documents adds its kinds to the tables here (schema_defs.go)
// and parses its documents with ParseDocument; it does not fork the
// validator. The package reads no file and knows no collection: what a
// document means, and what it refers to, are the model's and the checks'.
// It imports discovery/diag and discovery/syntax only.
//
// # Concurrency
//
// The schema tables are built once, at package initialisation, and never
// changed; every function may be called from any goroutine. A Document is
// not changed once ParseDocument returns it.
//
// # Caveats
//
//   - Validation is strict: a key a schema does not know is
//     schema/unknown-key (its severity set by Options), with the nearest
//     known key suggested; a misspelling of a required key that is missing
//     is that key's one diagnostic.
//   - A document's diagnostics are bounded (see diag.Limit), and its
//     parse is bounded in time and memory whatever its bytes hold (see
//     syntax.MaxFrontMatter).
//   - Keys required only of a profile that extends no other are checked
//     once the profile is merged with its parents, not on the child.
package schema
