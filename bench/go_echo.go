// go_echo.go -- Go's peer of the vthread model for make bench: a goroutine
// per connection that copies what it reads back to the socket. Blocking
// style code on Go's runtime: the goroutine parks in the netpoller when
// the socket would block, as a vthread parks on its carrier's epoll.
// Go sets TCP_NODELAY on every connection, as the other peers do.
//
//	go_echo PORT      (listens on 127.0.0.1:PORT until killed)
package main

import (
	"io"
	"net"
	"os"
)

func main() {
	ln, err := net.Listen("tcp", "127.0.0.1:"+os.Args[1])
	if err != nil {
		os.Exit(1)
	}
	for {
		conn, err := ln.Accept()
		if err != nil {
			continue
		}
		go func(c net.Conn) {
			io.Copy(c, c) // until the client closes or the socket fails
			c.Close()
		}(conn)
	}
}
