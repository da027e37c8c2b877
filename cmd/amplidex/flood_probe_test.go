package main

import (
	"bufio"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
)

// floodProbe is the hostile client of TestHangUpFlood, run as a process
// of its own (amplidex-flood SOCKET SCRATCH MODE THREADS): THREADS
// goroutines each connect, send one `collections` request and hang up at
// once, over and over, until stdin closes. With MODE "roots" each request
// names a new set of a client's roots (a bundled root under SCRATCH that
// no other request names); with "plain", none. It says "flooding" once
// the first request went, and "sent N" every 100 ms.
func floodProbe() {
	if len(os.Args) != 5 {
		fmt.Fprintln(os.Stderr, "usage: amplidex-flood SOCKET SCRATCH roots|plain THREADS")
		os.Exit(2)
	}
	socket, scratch, mode := os.Args[1], os.Args[2], os.Args[3]
	threads, err := strconv.Atoi(os.Args[4])
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	var stop atomic.Bool
	go func() {
		_, _ = bufio.NewReader(os.Stdin).ReadString('\n')
		stop.Store(true)
	}()
	var sent, n atomic.Int64
	var first sync.Once
	var wg sync.WaitGroup
	for range threads {
		wg.Go(func() {
			for !stop.Load() {
				nc, err := net.DialTimeout("unix", socket, time.Second)
				if err != nil {
					time.Sleep(time.Millisecond) // the daemon's queue is full
					continue
				}
				i := n.Add(1)
				line := fmt.Sprintf(`{"id":%d,"method":"collections","params":{}}`+"\n", i)
				if mode == "roots" {
					line = fmt.Sprintf(`{"id":%d,"method":"collections","params":{"roots":{"bundled":[%q]}}}`+"\n",
						i, filepath.Join(scratch, strconv.FormatInt(i, 10)))
				}
				nc.Write([]byte(line))
				nc.Close()
				sent.Add(1)
				first.Do(func() { fmt.Println("flooding") })
			}
		})
	}
	done := make(chan struct{})
	go func() {
		wg.Wait()
		close(done)
	}()
	t := time.NewTicker(100 * time.Millisecond)
	defer t.Stop()
	for {
		select {
		case <-done:
			fmt.Printf("sent %d\n", sent.Load())
			os.Exit(0)
		case <-t.C:
			fmt.Printf("sent %d\n", sent.Load())
		}
	}
}
