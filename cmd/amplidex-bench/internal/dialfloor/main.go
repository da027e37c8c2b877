// Command dialfloor is the least a client of the amplidex socket does: it
// dials the socket, sends one request, and prints the result. amplidex-bench
// times whole processes of it beside whole `amplidex query` processes, as
// the floor those cannot go below.
//
//	dialfloor SOCKET METHOD PARAMS
//
// PARAMS is the request's params as JSON. The result goes to standard
// output as one line of JSON; an error answer goes to standard error, and
// the exit code is then 1.
//
// It uses the standard library only, and nothing of amplidex's: the method
// name and the params come from the command line (amplidex-bench takes them
// from the query package's method table).
//
// # Caveats
//
//   - It checks neither the socket directory's owner nor the server's uid,
//     as amplidex's client does: it is a floor, not a client.
package main

import (
	"encoding/json"
	"fmt"
	"net"
	"os"
)

func main() {
	if len(os.Args) != 4 {
		fmt.Fprintln(os.Stderr, "usage: dialfloor SOCKET METHOD PARAMS")
		os.Exit(2)
	}
	if err := run(os.Args[1], os.Args[2], json.RawMessage(os.Args[3])); err != nil {
		fmt.Fprintln(os.Stderr, "dialfloor:", err)
		os.Exit(1)
	}
}

// request is one request line.
type request struct {
	ID     int             `json:"id"`
	Method string          `json:"method"`
	Params json.RawMessage `json:"params"`
}

// response is the part of an answer dialfloor reads.
type response struct {
	Result json.RawMessage `json:"result"`
	Error  *struct {
		Code    string `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

func run(socket, method string, params json.RawMessage) error {
	line, err := json.Marshal(request{ID: 1, Method: method, Params: params})
	if err != nil {
		return fmt.Errorf("encode request: %w", err)
	}
	conn, err := net.Dial("unix", socket)
	if err != nil {
		return err
	}
	defer conn.Close()
	if _, err := conn.Write(append(line, '\n')); err != nil {
		return fmt.Errorf("send request: %w", err)
	}
	var resp response
	if err := json.NewDecoder(conn).Decode(&resp); err != nil {
		return fmt.Errorf("read answer: %w", err)
	}
	if resp.Error != nil {
		return fmt.Errorf("%s: %s: %s", method, resp.Error.Code, resp.Error.Message)
	}
	_, err = os.Stdout.Write(append(resp.Result, '\n'))
	return err
}
