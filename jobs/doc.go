// Package jobs is weft's durable job queue: one River client per process over
// the weft database (PostgreSQL through pgx, SQLite through database/sql),
// shared by every domain that does work in the background.
//
// One client, not one per domain: River elects one client of all the
// processes on a database to run the queue's maintenance, and that client's
// rescuer retries a job whose worker died only when it knows the job's kind
// (it discards a kind it has no worker for). So every client on a database
// must know every kind. A domain registers its workers on the process's one
// [Queue] with [Register] before the queue is first used; a process that does
// not work a domain's queue still registers its kinds (with no workers), so
// that it rescues them right when it leads.
//
// Jobs are inserted with [Queue.Insert], or inside a transaction of the
// caller's with [Queue.InsertTx], so that the job exists exactly when the
// caller's writes commit. River's tables are created by [Migrate].
package jobs
