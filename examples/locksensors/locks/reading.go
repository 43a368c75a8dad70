package locks

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"time"
)

// MaxReadingSize bounds a reading message; anything longer is refused unread.
const MaxReadingSize = 4 << 10

// Reading is one message of a sensor:
//
//	{"sensor_id": "xa7v9Dfadr7H", "data": 1, "ts": 1764000000}
//
// ts is the sensor's time: Unix seconds (a number, fractions allowed) or an RFC 3339
// string.
type Reading struct {
	SensorID SensorID
	State    State
	At       time.Time // the sensor's ts
	Received time.Time // when the service received it
}

// DecodeReading parses one reading message. A message that is not a reading returns a
// *FieldError naming what is wrong ("body" for a message that is not a JSON object).
// Fields other than the three are ignored, so sensors may send more.
func DecodeReading(raw []byte) (Reading, error) {
	if len(raw) > MaxReadingSize {
		return Reading{}, &FieldError{Field: "body", Problem: fmt.Sprintf("%d bytes, more than %d", len(raw), MaxReadingSize)}
	}
	var w struct {
		SensorID *json.RawMessage `json:"sensor_id"`
		Data     *json.RawMessage `json:"data"`
		TS       *json.RawMessage `json:"ts"`
	}
	d := json.NewDecoder(bytes.NewReader(raw))
	d.UseNumber()
	if err := d.Decode(&w); err != nil {
		return Reading{}, &FieldError{Field: "body", Problem: "not a JSON object: " + err.Error()}
	}
	if d.More() {
		return Reading{}, &FieldError{Field: "body", Problem: "more than one JSON value"}
	}
	var r Reading
	var err error
	if r.SensorID, err = decodeSensorID(w.SensorID); err != nil {
		return Reading{}, err
	}
	if r.State, err = decodeData(w.Data); err != nil {
		return Reading{}, err
	}
	if r.At, err = decodeTS(w.TS); err != nil {
		return Reading{}, err
	}
	return r, nil
}

func decodeSensorID(v *json.RawMessage) (SensorID, error) {
	if v == nil || string(*v) == "null" {
		return "", &FieldError{Field: "sensor_id", Problem: "missing"}
	}
	var s string
	if err := json.Unmarshal(*v, &s); err != nil {
		return "", &FieldError{Field: "sensor_id", Problem: fmt.Sprintf("%s is not a string", truncate(string(*v), 40))}
	}
	return ParseSensorID(s)
}

func decodeData(v *json.RawMessage) (State, error) {
	if v == nil || string(*v) == "null" {
		return 0, &FieldError{Field: "data", Problem: "missing"}
	}
	switch string(*v) {
	case "0":
		return 0, nil
	case "1":
		return 1, nil
	}
	return 0, &FieldError{Field: "data", Problem: fmt.Sprintf("%s is not 0 or 1", truncate(string(*v), 40))}
}

// earliestTS and latestTS bound a believable ts: a sensor's clock may be off, but not
// by decades, and such a value is more likely milliseconds sent as seconds.
var (
	earliestTS = time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC)
	latestTS   = time.Date(2200, 1, 1, 0, 0, 0, 0, time.UTC)
)

func decodeTS(v *json.RawMessage) (time.Time, error) {
	if v == nil || string(*v) == "null" {
		return time.Time{}, &FieldError{Field: "ts", Problem: "missing"}
	}
	var t time.Time
	raw := string(*v)
	if len(raw) > 0 && raw[0] == '"' {
		var s string
		if err := json.Unmarshal(*v, &s); err != nil {
			return time.Time{}, &FieldError{Field: "ts", Problem: "not a string: " + err.Error()}
		}
		p, err := time.Parse(time.RFC3339Nano, s)
		if err != nil {
			return time.Time{}, &FieldError{Field: "ts", Problem: fmt.Sprintf("%q is not an RFC 3339 time", truncate(s, 40))}
		}
		t = p
	} else {
		f, err := strconv.ParseFloat(raw, 64)
		if err != nil || math.IsInf(f, 0) || math.IsNaN(f) {
			return time.Time{}, &FieldError{Field: "ts", Problem: fmt.Sprintf("%s is neither Unix seconds nor an RFC 3339 string", truncate(raw, 40))}
		}
		sec, frac := math.Modf(f)
		if sec < float64(earliestTS.Unix()) || sec > float64(latestTS.Unix()) {
			return time.Time{}, &FieldError{Field: "ts", Problem: fmt.Sprintf("%s is not Unix seconds between 2000 and 2200", truncate(raw, 40))}
		}
		t = time.Unix(int64(sec), int64(math.Round(frac*1e6))*1e3)
	}
	if t.Before(earliestTS) || !t.Before(latestTS) {
		return time.Time{}, &FieldError{Field: "ts", Problem: fmt.Sprintf("%s is not between 2000 and 2200", t.Format(time.RFC3339))}
	}
	// Microseconds: what PostgreSQL keeps, so that a stored ts compares as it was read.
	return t.UTC().Truncate(time.Microsecond), nil
}
