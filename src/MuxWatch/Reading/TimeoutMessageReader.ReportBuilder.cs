using MuxWatch.Model;
namespace MuxWatch.Reading;

/// <content>Collecting a report while reading.</content>
public static partial class TimeoutMessageReader
{
    /// <summary>Collects a report while reading; keeps the first value of a repeated key.</summary>
    private sealed class ReportBuilder
    {
        private readonly List<KeyValuePair<string, FieldValue>> _fields = [];
        private readonly HashSet<string> _names = new(StringComparer.Ordinal);
        private readonly List<string> _notes = [];
        private int _fieldChars;
        private string? _command;
        private string? _key;
        private string? _endpoint;

        public RedisErrorKind Kind { get; set; }

        public string Text { get; set; } = string.Empty;

        public string? ExceptionType { get; set; }

        public double? TimeoutMilliseconds { get; set; }

        public double? ElapsedMilliseconds { get; set; }

        public bool ThreadTheft { get; set; }

        public string? FailureType { get; set; }

        public int FieldCount => _fields.Count;

        public static ReportBuilder From(RedisErrorReport report)
        {
            var builder = new ReportBuilder
            {
                Kind = report.Kind,
                Text = report.Text,
                ExceptionType = report.ExceptionType,
                TimeoutMilliseconds = report.TimeoutMilliseconds,
                ElapsedMilliseconds = report.ElapsedMilliseconds,
                ThreadTheft = report.ThreadTheftIndicated,
                FailureType = report.FailureType,
                _command = report.Command,
                _key = report.Key,
                _endpoint = report.Endpoint,
            };
            foreach (var (name, value) in report.Fields)
            {
                builder.AddField(name, value);
            }

            builder._notes.AddRange(report.Notes);
            return builder;
        }

        public void SetCommand(string text)
        {
            var command = text.Trim().ToUpperInvariant();
            if (command.Length is > 0 and <= 40 && command.All(c => char.IsAsciiLetterOrDigit(c) || c is '.' or '_' or '-' or '|'))
            {
                _command = command;
            }
        }

        public void SetKey(string text)
        {
            var key = text.Trim();
            _key = key.Length == 0 ? null : key.Length > 512 ? key[..512] : key;
        }

        public void SetEndpoint(string text)
        {
            var endpoint = text.Trim();
            if (endpoint.StartsWith("Unspecified/", StringComparison.Ordinal))
            {
                endpoint = endpoint["Unspecified/".Length..];
            }

            // 3.x names a connection "Interactive#3@127.0.0.1:6379" (type, number, endpoint); no endpoint holds an '@'.
            var at = endpoint.LastIndexOf('@');
            if (at >= 0)
            {
                endpoint = endpoint[(at + 1)..];
            }

            // A Unix socket: "/var/run/redis.sock" ("!/var/run/redis.sock" in a connection's name), a connection
            // type after it as after host:port.
            if (endpoint.StartsWith("!/", StringComparison.Ordinal) || endpoint.StartsWith('/'))
            {
                endpoint = endpoint.TrimStart('!');
                foreach (var suffix in (string[])["/Interactive", "/Subscription"])
                {
                    endpoint = endpoint.EndsWith(suffix, StringComparison.Ordinal) ? endpoint[..^suffix.Length] : endpoint;
                }

                if (endpoint.Length is > 1 and <= MaxSocketPathLength && endpoint.All(c => char.IsAsciiLetterOrDigit(c) || c is '/' or '.' or '-' or '_'))
                {
                    _endpoint = endpoint;
                }

                return;
            }

            var slash = endpoint.IndexOf('/', StringComparison.Ordinal);
            if (slash > 0)
            {
                endpoint = endpoint[..slash];
            }

            var colon = endpoint.LastIndexOf(':');
            if (endpoint.Length is > 2 and <= 100 && colon > 0 && colon < endpoint.Length - 1
                && endpoint.AsSpan(colon + 1).ContainsAnyExceptInRange('0', '9') is false
                && endpoint.All(c => char.IsAsciiLetterOrDigit(c) || c is '.' or '-' or '_' or ':' or '[' or ']'))
            {
                _endpoint = endpoint;
            }
        }

        public void AddNote(string note)
        {
            if (note.Length > 0 && _notes.Count < MaxNotes)
            {
                _notes.Add(note.Length > MaxNoteChars ? note[..MaxNoteChars] : note);
                if (Kind is RedisErrorKind.ConnectionFailure or RedisErrorKind.NoConnection or RedisErrorKind.BacklogTimeout && FailureType is null)
                {
                    ReadFailureNote(note);
                }
            }
        }

        public void AddField(string name, FieldValue value)
        {
            value = Bounded(value);
            if (_fieldChars + value.Raw.Length <= MaxFieldTextChars && _names.Add(name))
            {
                _fieldChars += value.Raw.Length;
                _fields.Add(new(name, value));
            }
        }

        /// <summary>A value longer than <see cref="MaxFieldValueChars"/> is kept as its cut text: real values are a few characters.</summary>
        private static FieldValue Bounded(FieldValue value) =>
            value.Raw.Length <= MaxFieldValueChars ? value : FieldValueReader.Parse(SecretRedactor.CutAtToken(value.Raw, MaxFieldValueChars) + "…");

        public void SetField(string name, FieldValue value)
        {
            // From Exception.Data, which the app can fill with anything: redacted and bounded like the text.
            var redacted = SecretRedactor.Redact(value.Raw);
            value = Bounded(ReferenceEquals(redacted, value.Raw) ? value : FieldValueReader.Parse(redacted));
            _names.Add(name);
            for (var i = 0; i < _fields.Count; i++)
            {
                if (string.Equals(_fields[i].Key, name, StringComparison.Ordinal))
                {
                    _fields[i] = new(name, value);
                    return;
                }
            }

            _fields.Add(new(name, value));
        }

        public RedisErrorReport Build()
        {
            var endpoint = _endpoint;
            var command = _command;
            if (endpoint is null && FieldText("serverEndpoint") is { } fromField)
            {
                SetEndpoint(fromField);
                endpoint = _endpoint;
            }

            if (command is null && FieldText("command") is { } commandField)
            {
                SetCommand(commandField);
                command = _command;
            }

            if (TimeoutMilliseconds is null && FieldText("timeout") is { } timeoutField)
            {
                TimeoutMilliseconds = FieldValueReader.ParseNumber(timeoutField);
            }

            return new RedisErrorReport(
                Kind, Text, ExceptionType, command, _key, endpoint, TimeoutMilliseconds, ElapsedMilliseconds,
                ThreadTheft, FailureType, _notes.ToArray(), [.. _fields]);
        }

        private string? FieldText(string name)
        {
            foreach (var (key, value) in _fields)
            {
                if (string.Equals(key, name, StringComparison.Ordinal))
                {
                    return value.Raw;
                }
            }

            return null;
        }

        /// <summary><c>SocketFailure (ReadSocketError/ConnectionReset) on host:6379/Interactive</c>.</summary>
        private void ReadFailureNote(string note)
        {
            var on = note.IndexOf(" on ", StringComparison.Ordinal);
            if (on <= 0)
            {
                return;
            }

            // "SocketFailure (ReadSocketError/...) on" or "...server(s). UnableToConnect on": the word before " on ".
            var type = note[..on];
            var paren = type.IndexOf(" (", StringComparison.Ordinal);
            type = paren > 0 ? type[..paren] : type;
            type = type[(type.LastIndexOf(' ') + 1)..];
            if (IsFieldName(type))
            {
                FailureType = type;
            }

            // "on host:6379/Interactive" (or a socket's path, "on Interactive#1@!/run/redis.sock") names the endpoint;
            // 1.x's short "SocketClosed on GET" names the command.
            var target = note[(on + 4)..];
            var end = target.IndexOfAny([' ', ',']);
            var word = end < 0 ? target : target[..end];
            if (word.Contains(':', StringComparison.Ordinal) || word.Contains('/', StringComparison.Ordinal))
            {
                SetEndpoint(word);
            }
            else if (_command is null)
            {
                SetCommand(word);
                if (end > 0 && _key is null)
                {
                    SetKey(target[(end + 1)..]);
                }
            }
        }
    }
}
