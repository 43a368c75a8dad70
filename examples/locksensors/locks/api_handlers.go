package locks

import (
	"fmt"
	"net/http"
	"net/url"
	"strconv"

	"github.com/feedkit/feedkit/internal/jsonapi"
)

// The bodies of the API's answers and requests.
type (
	// apiHealthJSON is the body of GET /health.
	apiHealthJSON struct {
		Status string `json:"status"`
	}
	// apiSensorJSON is the body of POST /sensors and PUT /sensors/{id}. ID is a pointer
	// so that a PUT tells an id left out from one that differs from the path's.
	apiSensorJSON struct {
		ID      *string `json:"id"`
		Address string  `json:"address"`
	}
	// apiClientJSON is the body of POST /clients and PUT /clients/{id}.
	apiClientJSON struct {
		ID   *ClientID `json:"id"`
		Name string    `json:"name"`
		URL  string    `json:"url"`
	}
	apiSensorsJSON struct {
		Sensors []Sensor `json:"sensors"`
		Next    string   `json:"next,omitempty"`
	}
	apiClientsJSON struct {
		Clients []Client `json:"clients"`
		Next    string   `json:"next,omitempty"`
	}
	apiReadingsJSON struct {
		Readings   []StoredReading `json:"readings"`
		NextCursor string          `json:"next_cursor,omitempty"`
	}
	apiNotificationsJSON struct {
		Notifications []Notification `json:"notifications"`
		Next          string         `json:"next,omitempty"`
		NextCursor    string         `json:"next_cursor,omitempty"`
	}
	apiDeadLettersJSON struct {
		DeadLetters []DeadLetter `json:"dead_letters"`
		Next        string       `json:"next,omitempty"`
	}
)

// health answers as long as the process serves; the Store is not asked, so that a
// database outage does not get a healthy process restarted by its probe.
func (a *apiHandler) health(w http.ResponseWriter, _ *http.Request) error {
	return jsonapi.WriteJSON(w, http.StatusOK, apiHealthJSON{Status: "ok"})
}

func (a *apiHandler) listSensors(w http.ResponseWriter, r *http.Request) error {
	q, err := apiQuery(r, "after", "limit")
	if err != nil {
		return err
	}
	var after SensorID
	if s := q.Get("after"); s != "" {
		if after, err = ParseSensorID(s); err != nil {
			return apiBadField("after", s, `must be the "next" of the previous page, a sensor id`)
		}
	}
	limit, err := apiLimit(q)
	if err != nil {
		return err
	}
	list, more, err := apiPage(limit,
		func(n int) ([]Sensor, error) { return a.store.ListSensors(r.Context(), after, n) },
		func(last Sensor) ([]Sensor, error) { return a.store.ListSensors(r.Context(), last.ID, 1) })
	if err != nil {
		return err
	}
	body := apiSensorsJSON{Sensors: list}
	if more {
		body.Next = string(list[len(list)-1].ID)
	}
	return jsonapi.WriteJSON(w, http.StatusOK, body)
}

func (a *apiHandler) createSensor(w http.ResponseWriter, r *http.Request) error {
	var body apiSensorJSON
	if err := jsonapi.DecodeBody(w, r, &body); err != nil {
		return err
	}
	s := Sensor{Address: body.Address}
	if body.ID != nil {
		s.ID = SensorID(*body.ID)
	}
	if err := s.Validate(); err != nil {
		return apiWithValue(err, map[string]string{"id": string(s.ID), "address": s.Address})
	}
	if err := a.store.CreateSensor(r.Context(), s); err != nil {
		return err
	}
	a.logAction(r, "create sensor", "sensor", s.ID)
	w.Header().Set("Location", "/sensors/"+url.PathEscape(string(s.ID)))
	return jsonapi.WriteJSON(w, http.StatusCreated, s)
}

func (a *apiHandler) getSensor(w http.ResponseWriter, r *http.Request) error {
	id, err := apiSensorID(r)
	if err != nil {
		return err
	}
	s, err := a.store.GetSensor(r.Context(), id)
	if err != nil {
		return err
	}
	return jsonapi.WriteJSON(w, http.StatusOK, s)
}

func (a *apiHandler) updateSensor(w http.ResponseWriter, r *http.Request) error {
	id, err := apiSensorID(r)
	if err != nil {
		return err
	}
	var body apiSensorJSON
	if err := jsonapi.DecodeBody(w, r, &body); err != nil {
		return err
	}
	// The id is the sensor's identity in readings and notifications: a body naming
	// another is a mistake, not a rename.
	if body.ID != nil && *body.ID != string(id) {
		return apiBadField("id", *body.ID, fmt.Sprintf("differs from the path's %q; a sensor cannot be renamed", id))
	}
	s := Sensor{ID: id, Address: body.Address}
	if err := s.Validate(); err != nil {
		return apiWithValue(err, map[string]string{"address": s.Address})
	}
	if err := a.store.UpdateSensor(r.Context(), s); err != nil {
		return err
	}
	a.logAction(r, "update sensor", "sensor", id)
	return jsonapi.WriteJSON(w, http.StatusOK, s)
}

func (a *apiHandler) deleteSensor(w http.ResponseWriter, r *http.Request) error {
	id, err := apiSensorID(r)
	if err != nil {
		return err
	}
	if err := a.store.DeleteSensor(r.Context(), id); err != nil {
		return err
	}
	a.logAction(r, "delete sensor", "sensor", id)
	w.WriteHeader(http.StatusNoContent)
	return nil
}

func (a *apiHandler) sensorState(w http.ResponseWriter, r *http.Request) error {
	id, err := apiSensorID(r)
	if err != nil {
		return err
	}
	c, err := a.store.Current(r.Context(), id)
	if err != nil {
		return err
	}
	return jsonapi.WriteJSON(w, http.StatusOK, c)
}

func (a *apiHandler) sensorClients(w http.ResponseWriter, r *http.Request) error {
	id, err := apiSensorID(r)
	if err != nil {
		return err
	}
	list, err := a.store.Clients(r.Context(), id)
	if err != nil {
		return err
	}
	if list == nil {
		list = []Client{}
	}
	return jsonapi.WriteJSON(w, http.StatusOK, apiClientsJSON{Clients: list})
}

// apiLinkPath returns the sensor and the client of /sensors/{id}/clients/{client}.
func apiLinkPath(r *http.Request) (SensorID, ClientID, error) {
	sensor, err := apiSensorID(r)
	if err != nil {
		return "", 0, err
	}
	client, err := apiPathID(r, "client")
	if err != nil {
		return "", 0, err
	}
	return sensor, ClientID(client), nil
}

func (a *apiHandler) link(w http.ResponseWriter, r *http.Request) error {
	sensor, client, err := apiLinkPath(r)
	if err != nil {
		return err
	}
	if err := a.store.Link(r.Context(), sensor, client); err != nil {
		return err
	}
	a.logAction(r, "link", "sensor", sensor, "client", client)
	w.WriteHeader(http.StatusNoContent)
	return nil
}

func (a *apiHandler) unlink(w http.ResponseWriter, r *http.Request) error {
	sensor, client, err := apiLinkPath(r)
	if err != nil {
		return err
	}
	if err := a.store.Unlink(r.Context(), sensor, client); err != nil {
		return err
	}
	a.logAction(r, "unlink", "sensor", sensor, "client", client)
	w.WriteHeader(http.StatusNoContent)
	return nil
}

// apiHistoryRequest returns the sensor and the range, with its page size, of
// /sensors/{id}/readings and /sensors/{id}/notifications.
func apiHistoryRequest(r *http.Request) (SensorID, Range, error) {
	id, err := apiSensorID(r)
	if err != nil {
		return "", Range{}, err
	}
	q, err := apiQuery(r, "from", "to", "limit", "cursor")
	if err != nil {
		return "", Range{}, err
	}
	rg, err := apiRange(q)
	if err != nil {
		return "", Range{}, err
	}
	return id, rg, nil
}

// apiHistoryPage fetches the page of rg (a sensor's readings or notifications, by
// fetch) and whether another follows (see apiPage).
func apiHistoryPage[T any](rg Range, fetch func(Range) ([]T, error), cursor func(T) Cursor) ([]T, bool, error) {
	return apiPage(rg.Limit,
		func(n int) ([]T, error) { r := rg; r.Limit = n; return fetch(r) },
		func(last T) ([]T, error) { r := rg; r.After, r.Limit = cursor(last), 1; return fetch(r) })
}

func (a *apiHandler) readings(w http.ResponseWriter, r *http.Request) error {
	id, rg, err := apiHistoryRequest(r)
	if err != nil {
		return err
	}
	list, more, err := apiHistoryPage(rg,
		func(rg Range) ([]StoredReading, error) { return a.store.Readings(r.Context(), id, rg) },
		func(x StoredReading) Cursor { return Cursor{At: x.At, ID: x.ID} })
	if err != nil {
		return err
	}
	body := apiReadingsJSON{Readings: list}
	if more {
		last := list[len(list)-1]
		body.NextCursor = apiEncodeCursor(last.At, last.ID)
	}
	return jsonapi.WriteJSON(w, http.StatusOK, body)
}

func (a *apiHandler) sensorNotifications(w http.ResponseWriter, r *http.Request) error {
	id, rg, err := apiHistoryRequest(r)
	if err != nil {
		return err
	}
	list, more, err := apiHistoryPage(rg,
		func(rg Range) ([]Notification, error) { return a.store.Notifications(r.Context(), id, rg) },
		func(n Notification) Cursor { return Cursor{At: n.At, ID: int64(n.ID)} })
	if err != nil {
		return err
	}
	body := apiNotificationsJSON{Notifications: list}
	if more {
		last := list[len(list)-1]
		body.NextCursor = apiEncodeCursor(last.At, int64(last.ID))
	}
	return jsonapi.WriteJSON(w, http.StatusOK, body)
}

// apiAfterAndLimit returns the after and limit of a list by id.
func apiAfterAndLimit(r *http.Request) (int64, int, error) {
	q, err := apiQuery(r, "after", "limit")
	if err != nil {
		return 0, 0, err
	}
	after, err := apiAfterID(q)
	if err != nil {
		return 0, 0, err
	}
	limit, err := apiLimit(q)
	if err != nil {
		return 0, 0, err
	}
	return after, limit, nil
}

func (a *apiHandler) listClients(w http.ResponseWriter, r *http.Request) error {
	after, limit, err := apiAfterAndLimit(r)
	if err != nil {
		return err
	}
	list, more, err := apiPage(limit,
		func(n int) ([]Client, error) { return a.store.ListClients(r.Context(), ClientID(after), n) },
		func(last Client) ([]Client, error) { return a.store.ListClients(r.Context(), last.ID, 1) })
	if err != nil {
		return err
	}
	body := apiClientsJSON{Clients: list}
	if more {
		body.Next = strconv.FormatInt(int64(list[len(list)-1].ID), 10)
	}
	return jsonapi.WriteJSON(w, http.StatusOK, body)
}

func (a *apiHandler) createClient(w http.ResponseWriter, r *http.Request) error {
	var body apiClientJSON
	if err := jsonapi.DecodeBody(w, r, &body); err != nil {
		return err
	}
	if body.ID != nil {
		return apiBadField("id", strconv.FormatInt(int64(*body.ID), 10), "is assigned by the service; leave it out")
	}
	c := Client{Name: body.Name, URL: body.URL}
	if err := c.Validate(); err != nil {
		return apiWithValue(err, map[string]string{"name": c.Name, "url": c.URL})
	}
	c, err := a.store.CreateClient(r.Context(), c)
	if err != nil {
		return err
	}
	a.logAction(r, "create client", "client", c.ID)
	w.Header().Set("Location", "/clients/"+strconv.FormatInt(int64(c.ID), 10))
	return jsonapi.WriteJSON(w, http.StatusCreated, c)
}

// apiClientPath returns the client of /clients/{id}.
func apiClientPath(r *http.Request) (ClientID, error) {
	id, err := apiPathID(r, "id")
	return ClientID(id), err
}

func (a *apiHandler) getClient(w http.ResponseWriter, r *http.Request) error {
	id, err := apiClientPath(r)
	if err != nil {
		return err
	}
	c, err := a.store.GetClient(r.Context(), id)
	if err != nil {
		return err
	}
	return jsonapi.WriteJSON(w, http.StatusOK, c)
}

func (a *apiHandler) updateClient(w http.ResponseWriter, r *http.Request) error {
	id, err := apiClientPath(r)
	if err != nil {
		return err
	}
	var body apiClientJSON
	if err := jsonapi.DecodeBody(w, r, &body); err != nil {
		return err
	}
	if body.ID != nil && *body.ID != id {
		return apiBadField("id", strconv.FormatInt(int64(*body.ID), 10), fmt.Sprintf("differs from the path's %d; a client's id cannot change", id))
	}
	c := Client{ID: id, Name: body.Name, URL: body.URL}
	if err := c.Validate(); err != nil {
		return apiWithValue(err, map[string]string{"name": c.Name, "url": c.URL})
	}
	if err := a.store.UpdateClient(r.Context(), c); err != nil {
		return err
	}
	a.logAction(r, "update client", "client", id)
	return jsonapi.WriteJSON(w, http.StatusOK, c)
}

func (a *apiHandler) deleteClient(w http.ResponseWriter, r *http.Request) error {
	id, err := apiClientPath(r)
	if err != nil {
		return err
	}
	if err := a.store.DeleteClient(r.Context(), id); err != nil {
		return err
	}
	a.logAction(r, "delete client", "client", id)
	w.WriteHeader(http.StatusNoContent)
	return nil
}

func (a *apiHandler) deadNotifications(w http.ResponseWriter, r *http.Request) error {
	after, limit, err := apiAfterAndLimit(r)
	if err != nil {
		return err
	}
	list, more, err := apiPage(limit,
		func(n int) ([]Notification, error) {
			return a.store.DeadNotifications(r.Context(), NotificationID(after), n)
		},
		func(last Notification) ([]Notification, error) {
			return a.store.DeadNotifications(r.Context(), last.ID, 1)
		})
	if err != nil {
		return err
	}
	body := apiNotificationsJSON{Notifications: list}
	if more {
		body.Next = strconv.FormatInt(int64(list[len(list)-1].ID), 10)
	}
	return jsonapi.WriteJSON(w, http.StatusOK, body)
}

func (a *apiHandler) getNotification(w http.ResponseWriter, r *http.Request) error {
	id, err := apiPathID(r, "id")
	if err != nil {
		return err
	}
	n, err := a.store.Notification(r.Context(), NotificationID(id))
	if err != nil {
		return err
	}
	return jsonapi.WriteJSON(w, http.StatusOK, n)
}

func (a *apiHandler) replay(w http.ResponseWriter, r *http.Request) error {
	id, err := apiPathID(r, "id")
	if err != nil {
		return err
	}
	if err := a.store.Replay(r.Context(), NotificationID(id), a.clock.Now()); err != nil {
		return err
	}
	a.logAction(r, "replay notification", "notification", id)
	// Before reading it back: the replay is done whether or not that read succeeds.
	if a.onReplay != nil {
		a.onReplay()
	}
	n, err := a.store.Notification(r.Context(), NotificationID(id))
	if err != nil {
		return err
	}
	return jsonapi.WriteJSON(w, http.StatusOK, n)
}

func (a *apiHandler) deadLetters(w http.ResponseWriter, r *http.Request) error {
	after, limit, err := apiAfterAndLimit(r)
	if err != nil {
		return err
	}
	list, more, err := apiPage(limit,
		func(n int) ([]DeadLetter, error) { return a.store.DeadLetters(r.Context(), after, n) },
		func(last DeadLetter) ([]DeadLetter, error) { return a.store.DeadLetters(r.Context(), last.ID, 1) })
	if err != nil {
		return err
	}
	body := apiDeadLettersJSON{DeadLetters: list}
	if more {
		body.Next = strconv.FormatInt(list[len(list)-1].ID, 10)
	}
	return jsonapi.WriteJSON(w, http.StatusOK, body)
}

// logAction records an operator's change, and from where it came: these change who is
// told about which lock.
func (a *apiHandler) logAction(r *http.Request, action string, args ...any) {
	a.log.Info("operator action", append([]any{"action", action, "remote", r.RemoteAddr}, args...)...)
}
