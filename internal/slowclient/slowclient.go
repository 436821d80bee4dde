// Package slowclient sends HTTP/1.1 requests the way a slow or hostile
// client does, over raw TCP: a body that trickles in one byte at a time, or a
// keep-alive connection left idle. Tests of a server's time bounds use it to
// see what the server does with such connections — the status it answers,
// whether it closes the connection before the client is done — rather than
// how long it takes.
package slowclient

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"syscall"
	"time"
)

// giveUp bounds every wait of this package, so that a server that never
// answers fails a test instead of hanging it.
const giveUp = 2 * time.Minute

// Result is what the server did with a slow request.
type Result struct {
	// Status is the status the server answered, 0 when it closed the
	// connection without an answer.
	Status int
	// Header and Body are the answer's.
	Header http.Header
	Body   string
	// Sent is how many body bytes had been written when the server answered
	// or closed the connection: all of them when it waited for the whole
	// body.
	Sent int
}

// Conn is a client connection to a server.
type Conn struct {
	conn   net.Conn
	reader *bufio.Reader
}

// Dial connects to addr: "host:port" or a base URL "http://host:port".
func Dial(addr string) (*Conn, error) {
	conn, err := net.Dial("tcp", strings.TrimPrefix(addr, "http://"))
	if err != nil {
		return nil, err
	}
	return &Conn{conn: conn, reader: bufio.NewReader(conn)}, nil
}

// Close closes the connection.
func (c *Conn) Close() error { return c.conn.Close() }

// Send writes a request — its line, Host, Content-Length (len(body)) and
// header — at once, and then its body one byte per interval until the body
// is sent or the server answers or closes the connection. It returns once
// the answer is read, or the connection is closed (Status 0). A connection
// the server keeps open may send another request.
func (c *Conn) Send(method, path string, header http.Header, body []byte, interval time.Duration) (Result, error) {
	var head strings.Builder
	fmt.Fprintf(&head, "%s %s HTTP/1.1\r\nHost: %s\r\nContent-Length: %d\r\n", method, path, c.conn.RemoteAddr(), len(body))
	for name, values := range header {
		for _, v := range values {
			fmt.Fprintf(&head, "%s: %s\r\n", name, v)
		}
	}
	head.WriteString("\r\n")
	_ = c.conn.SetDeadline(time.Now().Add(giveUp))
	defer func() { _ = c.conn.SetDeadline(time.Time{}) }()
	if _, err := io.WriteString(c.conn, head.String()); err != nil {
		return Result{}, err
	}
	type answer struct {
		res Result
		err error
	}
	answered := make(chan answer, 1)
	go func() {
		res, err := http.ReadResponse(c.reader, nil)
		if err != nil {
			answered <- answer{err: err}
			return
		}
		b, err := io.ReadAll(res.Body)
		res.Body.Close()
		answered <- answer{res: Result{Status: res.StatusCode, Header: res.Header, Body: string(b)}, err: err}
	}()
	sent := 0
	for sent < len(body) {
		select {
		case a := <-answered:
			return closedIsNoAnswer(a.res, a.err, sent)
		case <-time.After(interval):
		}
		if _, err := c.conn.Write(body[sent : sent+1]); err != nil {
			break // closed by the server: what it answered, if anything, is read below
		}
		sent++
	}
	a := <-answered
	return closedIsNoAnswer(a.res, a.err, sent)
}

// closedIsNoAnswer: a connection closed without an answer is Status 0, not
// an error.
func closedIsNoAnswer(res Result, err error, sent int) (Result, error) {
	res.Sent = sent
	if closed(err) {
		err = nil
	}
	return res, err
}

// WaitClosed reads and drops what the server sends until it closes the
// connection; an error says it was still open after two minutes.
func (c *Conn) WaitClosed() error {
	_ = c.conn.SetReadDeadline(time.Now().Add(giveUp))
	_, err := io.Copy(io.Discard, c.reader)
	if err == nil || closed(err) {
		return nil
	}
	return fmt.Errorf("the server kept the connection open: %w", err)
}

// closed reports errors that mean the server closed the connection.
func closed(err error) bool {
	return errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) ||
		errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE)
}
