namespace MuxWatch.Model;

/// <summary>
/// What one StackExchange.Redis error message says, as read by <c>TimeoutMessageReader</c> (Reading).
/// </summary>
/// <remarks>
/// Every field the message carried is kept under the key it was written with (<c>qs</c>, <c>in-pipe</c>,
/// <c>WORKER</c>, ...), unknown keys included, so that a diagnosis can always be checked against the text.
/// </remarks>
public sealed class RedisErrorReport
{
    private readonly List<KeyValuePair<string, FieldValue>> _fields;
    private readonly Dictionary<string, FieldValue> _byName;

    internal RedisErrorReport(
        RedisErrorKind kind,
        string text,
        string? exceptionType,
        string? command,
        string? key,
        string? endpoint,
        double? timeoutMilliseconds,
        double? elapsedMilliseconds,
        bool threadTheftIndicated,
        string? failureType,
        IReadOnlyList<string> notes,
        List<KeyValuePair<string, FieldValue>> fields)
    {
        Kind = kind;
        Text = text;
        ExceptionType = exceptionType;
        Command = command;
        Key = key;
        Endpoint = endpoint;
        TimeoutMilliseconds = timeoutMilliseconds;
        ElapsedMilliseconds = elapsedMilliseconds;
        ThreadTheftIndicated = threadTheftIndicated;
        FailureType = failureType;
        Notes = notes;
        _fields = fields;
        _byName = new Dictionary<string, FieldValue>(fields.Count, StringComparer.Ordinal);
        foreach (var (name, value) in fields)
        {
            _byName.TryAdd(name, value);
        }
    }

    /// <summary>A report of nothing: no header, no fields.</summary>
    public static RedisErrorReport Empty { get; } = new(RedisErrorKind.Unknown, string.Empty, null, null, null, null, null, null, false, null, [], []);

    /// <summary>Which message this is, from its header.</summary>
    public RedisErrorKind Kind { get; }

    /// <summary>The message as read: stack trace dropped, lines joined, at most 4096 characters.</summary>
    public string Text { get; }

    /// <summary>True for the four timeout forms (sync, async, backlog, write).</summary>
    public bool IsTimeout => Kind is RedisErrorKind.SyncTimeout or RedisErrorKind.AsyncTimeout
        or RedisErrorKind.BacklogTimeout or RedisErrorKind.WriteTimeout;

    /// <summary>The exception type named in front of the message, when the text carried one.</summary>
    public string? ExceptionType { get; }

    /// <summary>The command name only, upper case (<c>GET</c>); never its arguments.</summary>
    public string? Command { get; }

    /// <summary>The key as the header wrote it, when the client included it (IncludeDetailInExceptions).</summary>
    public string? Key { get; }

    /// <summary>The server endpoint as <c>host:port</c>, when the message names one.</summary>
    public string? Endpoint { get; }

    /// <summary>The configured timeout the message reports, in milliseconds.</summary>
    public double? TimeoutMilliseconds { get; }

    /// <summary>How long an async call had waited when the heartbeat noticed it, in milliseconds.</summary>
    public double? ElapsedMilliseconds { get; }

    /// <summary>True when the client flagged <c>possible thread-theft</c> (the reader ran a caller's continuation).</summary>
    public bool ThreadTheftIndicated { get; }

    /// <summary>The connection failure type (<c>SocketFailure</c>, <c>UnableToConnect</c>, ...), for connection errors.</summary>
    public string? FailureType { get; }

    /// <summary>Text that was not a <c>key: value</c> field, such as an inner connection error.</summary>
    public IReadOnlyList<string> Notes { get; }

    /// <summary>Every field, in the order written; a key written twice keeps its first value.</summary>
    public IReadOnlyList<KeyValuePair<string, FieldValue>> Fields => _fields;

    /// <summary>
    /// How long the request waited, as far as the message tells: its elapsed figure (async) or its timeout
    /// (sync); null when it has neither, or one beyond a day (no real client writes that).
    /// </summary>
    internal TimeSpan? WaitedFor =>
        (ElapsedMilliseconds ?? TimeoutMilliseconds) is { } waited and > 0 and < 86_400_000 ? TimeSpan.FromMilliseconds(waited) : null;

    /// <summary>The field written under <paramref name="key"/> (exact case first, then any case).</summary>
    public FieldValue? Field(string key)
    {
        if (_byName.TryGetValue(key, out var exact))
        {
            return exact;
        }

        foreach (var (name, value) in _fields)
        {
            if (string.Equals(name, key, StringComparison.OrdinalIgnoreCase))
            {
                return value;
            }
        }

        return null;
    }

    /// <summary>
    /// A field as a number; for values such as <c>0/0</c> (1.x <c>in</c>, <c>wr</c>) the first number.
    /// </summary>
    public double? Number(string key)
    {
        var field = Field(key);
        if (field is null)
        {
            return null;
        }

        if (field.Number is { } number)
        {
            return number;
        }

        return field.LeadingNumber;
    }
}
