package main

// setFixOpened makes check --fix call f with a file's real path once it
// has opened the file to write it, before it compares its text: a test
// edits the file there, as an editor saving it would.
func (a *App) setFixOpened(f func(path string)) { a.fixOpened = f }
