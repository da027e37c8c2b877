package catalog

// Generation returns the number of batches recorded so far, for tests
// that wait until a change is recorded while another still reads.
func Generation(c *Catalog) uint64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.gen
}
