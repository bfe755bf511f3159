package client

// EndpointAddr is the address of c's own endpoint, where the node's replies
// arrive (for the external tests).
func EndpointAddr(c *Client) string { return c.system.Address() }
