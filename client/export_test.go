package client

// EndpointAddr is the address of c's own endpoint (where replies arrive),
// for the black-box tests.
func EndpointAddr(c *Client) string { return c.system.Address() }
