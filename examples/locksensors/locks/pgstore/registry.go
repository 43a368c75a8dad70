package pgstore

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/feedkit/feedkit/examples/locksensors/locks"
	"github.com/feedkit/feedkit/internal/pgschema"
)

// The sensor and its empty state are created by one statement, so that no reader ever
// finds one without the other.
const createSensorSQL = `WITH s AS (
		INSERT INTO {sensors} (id, address) VALUES ($1, $2) ON CONFLICT (id) DO NOTHING RETURNING id
	)
	INSERT INTO {sensor_states} (sensor_id) SELECT id FROM s`

const (
	getSensorSQL    = `SELECT id, address FROM {sensors} WHERE id = $1`
	updateSensorSQL = `UPDATE {sensors} SET address = $2 WHERE id = $1`
	// DeleteSensor takes the state's lock before the sensor's, in the order of Update,
	// which holds the state's lock when its inserts check the sensor's key: a delete
	// taking the sensor's first would deadlock with it.
	lockSensorStateSQL = `SELECT 1 FROM {sensor_states} WHERE sensor_id = $1 FOR UPDATE`
	deleteSensorSQL    = `DELETE FROM {sensors} WHERE id = $1`
	listSensorsSQL     = `SELECT id, address FROM {sensors} WHERE id > $1 ORDER BY id LIMIT $2`
	sensorExistsSQL    = `SELECT EXISTS (SELECT FROM {sensors} WHERE id = $1)`

	createClientSQL = `INSERT INTO {clients} (name, url) VALUES ($1, $2) RETURNING id`
	getClientSQL    = `SELECT id, name, url FROM {clients} WHERE id = $1`
	updateClientSQL = `UPDATE {clients} SET name = $2, url = $3 WHERE id = $1`
	deleteClientSQL = `DELETE FROM {clients} WHERE id = $1`
	listClientsSQL  = `SELECT id, name, url FROM {clients} WHERE id > $1 ORDER BY id LIMIT $2`
	clientExistsSQL = `SELECT EXISTS (SELECT FROM {clients} WHERE id = $1)`

	linkSQL   = `INSERT INTO {links} (sensor_id, client_id) VALUES ($1, $2) ON CONFLICT DO NOTHING`
	unlinkSQL = `DELETE FROM {links} WHERE sensor_id = $1 AND client_id = $2`
	// One row with NULLs for a sensor without clients, none for an unknown sensor.
	linkedClientsSQL = `SELECT c.id, c.name, c.url FROM {sensors} s
		LEFT JOIN ({links} l JOIN {clients} c ON c.id = l.client_id) ON l.sensor_id = s.id
		WHERE s.id = $1 ORDER BY c.id`
	currentSQL = `SELECT ` + stateColumns + ` FROM {sensor_states} WHERE sensor_id = $1`
)

// stateColumns are the columns scanState reads.
const stateColumns = `sensor_id, known, state, reading_at, changed_at, last_seen, lost, sequence`

// foreignKeyViolation is the SQLSTATE of an insert referring to a missing row.
const foreignKeyViolation = "23503"

// CreateSensor implements locks.Registry.
func (s *Store) CreateSensor(ctx context.Context, sensor locks.Sensor) error {
	tag, err := s.pool.Exec(ctx, s.q.createSensor, sensor.ID, sensor.Address)
	if err != nil {
		return failed(fmt.Sprintf("create sensor %q", sensor.ID), err)
	}
	if tag.RowsAffected() == 0 {
		return fmt.Errorf("sensor %q: %w", sensor.ID, locks.ErrExists)
	}
	return nil
}

// GetSensor implements locks.Registry.
func (s *Store) GetSensor(ctx context.Context, id locks.SensorID) (locks.Sensor, error) {
	var out locks.Sensor
	err := s.pool.QueryRow(ctx, s.q.getSensor, id).Scan(&out.ID, &out.Address)
	if errors.Is(err, pgx.ErrNoRows) {
		return locks.Sensor{}, sensorNotFound(id)
	}
	if err != nil {
		return locks.Sensor{}, failed(fmt.Sprintf("get sensor %q", id), err)
	}
	return out, nil
}

// UpdateSensor implements locks.Registry.
func (s *Store) UpdateSensor(ctx context.Context, sensor locks.Sensor) error {
	tag, err := s.pool.Exec(ctx, s.q.updateSensor, sensor.ID, sensor.Address)
	if err != nil {
		return failed(fmt.Sprintf("update sensor %q", sensor.ID), err)
	}
	if tag.RowsAffected() == 0 {
		return sensorNotFound(sensor.ID)
	}
	return nil
}

// DeleteSensor implements locks.Registry. Its state, links, readings, notifications and
// their attempts go with it (ON DELETE CASCADE). It waits for an Update holding the
// sensor's state to commit.
func (s *Store) DeleteSensor(ctx context.Context, id locks.SensorID) error {
	err := s.inTx(ctx, func(c *pgx.Conn) error {
		var (
			deleted   bool
			commitErr error
		)
		b := &pgx.Batch{}
		b.Queue("begin")
		b.Queue(s.q.lockSensorState, id)
		b.Queue(s.q.deleteSensor, id).Exec(func(tag pgconn.CommandTag) error {
			deleted = tag.RowsAffected() > 0
			return nil
		})
		b.Queue("commit").Exec(func(tag pgconn.CommandTag) error {
			commitErr = committed(tag, nil)
			return nil
		})
		if err := c.SendBatch(ctx, b).Close(); err != nil {
			return err
		}
		if commitErr != nil {
			return commitErr
		}
		if !deleted {
			return sensorNotFound(id)
		}
		return nil
	})
	if err != nil {
		return failed(fmt.Sprintf("delete sensor %q", id), err)
	}
	return nil
}

// ListSensors implements locks.Registry, in byte order of the ids (the column's
// collation is "C").
func (s *Store) ListSensors(ctx context.Context, after locks.SensorID, limit int) ([]locks.Sensor, error) {
	limit, err := locks.ResolveLimit("limit", limit)
	if err != nil {
		return nil, err
	}
	rows, err := s.pool.Query(ctx, s.q.listSensors, after, limit)
	if err != nil {
		return nil, failed("list sensors", err)
	}
	var out []locks.Sensor
	var x locks.Sensor
	_, err = pgx.ForEachRow(rows, []any{&x.ID, &x.Address}, func() error {
		out = append(out, x)
		return nil
	})
	if err != nil {
		return nil, failed("list sensors", err)
	}
	return out, nil
}

// CreateClient implements locks.Registry.
func (s *Store) CreateClient(ctx context.Context, c locks.Client) (locks.Client, error) {
	if err := s.pool.QueryRow(ctx, s.q.createClient, c.Name, c.URL).Scan(&c.ID); err != nil {
		return locks.Client{}, failed("create client", err)
	}
	return c, nil
}

// GetClient implements locks.Registry.
func (s *Store) GetClient(ctx context.Context, id locks.ClientID) (locks.Client, error) {
	var c locks.Client
	err := s.pool.QueryRow(ctx, s.q.getClient, id).Scan(&c.ID, &c.Name, &c.URL)
	if errors.Is(err, pgx.ErrNoRows) {
		return locks.Client{}, clientNotFound(id)
	}
	if err != nil {
		return locks.Client{}, failed(fmt.Sprintf("get client %d", id), err)
	}
	return c, nil
}

// UpdateClient implements locks.Registry.
func (s *Store) UpdateClient(ctx context.Context, c locks.Client) error {
	tag, err := s.pool.Exec(ctx, s.q.updateClient, c.ID, c.Name, c.URL)
	if err != nil {
		return failed(fmt.Sprintf("update client %d", c.ID), err)
	}
	if tag.RowsAffected() == 0 {
		return clientNotFound(c.ID)
	}
	return nil
}

// DeleteClient implements locks.Registry. Its links go with it; its notifications stay,
// and a pending one is cancelled by the notifier when it is next claimed (no link).
func (s *Store) DeleteClient(ctx context.Context, id locks.ClientID) error {
	tag, err := s.pool.Exec(ctx, s.q.deleteClient, id)
	if err != nil {
		return failed(fmt.Sprintf("delete client %d", id), err)
	}
	if tag.RowsAffected() == 0 {
		return clientNotFound(id)
	}
	return nil
}

// ListClients implements locks.Registry.
func (s *Store) ListClients(ctx context.Context, after locks.ClientID, limit int) ([]locks.Client, error) {
	limit, err := locks.ResolveLimit("limit", limit)
	if err != nil {
		return nil, err
	}
	rows, err := s.pool.Query(ctx, s.q.listClients, after, limit)
	if err != nil {
		return nil, failed("list clients", err)
	}
	var out []locks.Client
	var c locks.Client
	_, err = pgx.ForEachRow(rows, []any{&c.ID, &c.Name, &c.URL}, func() error {
		out = append(out, c)
		return nil
	})
	if err != nil {
		return nil, failed("list clients", err)
	}
	return out, nil
}

// Link implements locks.Registry.
func (s *Store) Link(ctx context.Context, sensor locks.SensorID, client locks.ClientID) error {
	_, err := s.pool.Exec(ctx, s.q.link, sensor, client)
	var pe *pgconn.PgError
	if errors.As(err, &pe) && pe.Code == foreignKeyViolation {
		// Which key is missing is asked rather than read from the error's text, which the
		// server words in its own language; the sensor is named first, as MemoryStore does.
		return s.missing(ctx, "link", sensor, client, err)
	}
	if err != nil {
		return failed(fmt.Sprintf("link sensor %q and client %d", sensor, client), err)
	}
	return nil
}

// missing returns ErrNotFound for whichever of sensor and client does not exist, or
// cause, wrapped, when both exist (created again since cause).
func (s *Store) missing(ctx context.Context, op string, sensor locks.SensorID, client locks.ClientID, cause error) error {
	var sensorOK, clientOK bool
	b := &pgx.Batch{}
	b.Queue(s.q.sensorExists, sensor).QueryRow(func(r pgx.Row) error { return r.Scan(&sensorOK) })
	b.Queue(s.q.clientExists, client).QueryRow(func(r pgx.Row) error { return r.Scan(&clientOK) })
	if err := s.pool.SendBatch(ctx, b).Close(); err != nil {
		return failed(fmt.Sprintf("%s sensor %q and client %d", op, sensor, client), errors.Join(cause, err))
	}
	switch {
	case !sensorOK:
		return sensorNotFound(sensor)
	case !clientOK:
		return clientNotFound(client)
	}
	return failed(fmt.Sprintf("%s sensor %q and client %d", op, sensor, client), cause)
}

// Unlink implements locks.Registry.
func (s *Store) Unlink(ctx context.Context, sensor locks.SensorID, client locks.ClientID) error {
	tag, err := s.pool.Exec(ctx, s.q.unlink, sensor, client)
	if err != nil {
		return failed(fmt.Sprintf("unlink sensor %q and client %d", sensor, client), err)
	}
	if tag.RowsAffected() > 0 {
		return nil
	}
	var exists bool
	if err := s.pool.QueryRow(ctx, s.q.sensorExists, sensor).Scan(&exists); err != nil {
		return failed(fmt.Sprintf("unlink sensor %q and client %d", sensor, client), err)
	}
	if !exists {
		return sensorNotFound(sensor)
	}
	return fmt.Errorf("link of sensor %q and client %d: %w", sensor, client, locks.ErrNotFound)
}

// Clients implements locks.Registry.
func (s *Store) Clients(ctx context.Context, sensor locks.SensorID) ([]locks.Client, error) {
	rows, err := s.pool.Query(ctx, s.q.linkedClients, sensor)
	if err != nil {
		return nil, failed(fmt.Sprintf("clients of sensor %q", sensor), err)
	}
	var out []locks.Client
	var (
		id        *int64
		name, url *string
	)
	_, err = pgx.ForEachRow(rows, []any{&id, &name, &url}, func() error {
		if out == nil {
			out = []locks.Client{}
		}
		if id != nil {
			out = append(out, locks.Client{ID: locks.ClientID(*id), Name: *name, URL: *url})
		}
		return nil
	})
	if err != nil {
		return nil, failed(fmt.Sprintf("clients of sensor %q", sensor), err)
	}
	if out == nil {
		return nil, sensorNotFound(sensor)
	}
	return out, nil
}

// Current implements locks.Registry.
func (s *Store) Current(ctx context.Context, id locks.SensorID) (locks.Current, error) {
	c, err := scanState(s.pool.QueryRow(ctx, s.q.current, id))
	if errors.Is(err, pgx.ErrNoRows) {
		return locks.Current{}, sensorNotFound(id)
	}
	if err != nil {
		return locks.Current{}, failed(fmt.Sprintf("state of sensor %q", id), err)
	}
	return c, nil
}

// scanState reads the stateColumns of a row.
func scanState(r pgx.Row) (locks.Current, error) {
	var (
		c                              locks.Current
		state                          int16
		readingAt, changedAt, lastSeen *time.Time
	)
	if err := r.Scan(&c.SensorID, &c.Known, &state, &readingAt, &changedAt, &lastSeen, &c.Lost, &c.Sequence); err != nil {
		return locks.Current{}, err
	}
	c.State = locks.State(state)
	c.ReadingAt, c.ChangedAt, c.LastSeen = pgschema.OutNull(readingAt), pgschema.OutNull(changedAt), pgschema.OutNull(lastSeen)
	return c, nil
}
