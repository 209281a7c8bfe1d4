using System.Text.Json.Serialization;
using MuxWatch.Timeouts;

namespace MuxWatch.Json;

/// <summary>
/// One diagnosed message as JSON: what it was, why it happened, and every field it carried under the
/// key it was written with. <c>explain --jsonl</c> writes this; a recorded timeout adds when and where.
/// </summary>
public class DiagnosisAnswer
{
    /// <summary>Describes one message and its diagnosis.</summary>
    protected DiagnosisAnswer(RedisErrorReport report, TimeoutDiagnosis diagnosis)
    {
        ArgumentNullException.ThrowIfNull(report);
        ArgumentNullException.ThrowIfNull(diagnosis);
        Kind = report.Kind;
        Cause = diagnosis.Cause;
        Confidence = diagnosis.Confidence;
        Causes = diagnosis.Causes;
        Evidence = diagnosis.Evidence;
        Advice = diagnosis.Advice;
        Command = report.Command;
        Key = report.Key;
        Endpoint = report.Endpoint;
        ExceptionType = report.ExceptionType;
        FailureType = report.FailureType;
        TimeoutMs = report.TimeoutMilliseconds;
        ElapsedMs = report.ElapsedMilliseconds;
        ThreadTheft = report.ThreadTheftIndicated;
        var fields = new OrderedDictionary<string, FieldValue>(report.Fields.Count, StringComparer.Ordinal);
        foreach (var (name, value) in report.Fields)
        {
            fields.TryAdd(name, value); // a key written twice keeps its first value, as the report does
        }

        Fields = fields;
        Message = report.Text;
        Notes = report.Notes.Count > 0 ? report.Notes : null;
    }

    /// <summary>The diagnosis of <paramref name="report"/> as JSON.</summary>
    public static DiagnosisAnswer From(RedisErrorReport report, TimeoutDiagnosis diagnosis) => new(report, diagnosis);

    /// <summary>Which message it was, e.g. <c>sync-timeout</c>.</summary>
    public RedisErrorKind Kind { get; }

    /// <summary>The primary cause.</summary>
    public TimeoutCause Cause { get; }

    /// <summary>How firmly the evidence holds the primary cause (<c>low</c>, <c>medium</c>, <c>high</c>).</summary>
    public DiagnosisConfidence Confidence { get; }

    /// <summary>Every cause with evidence, primary first.</summary>
    public IReadOnlyList<TimeoutCause> Causes { get; }

    /// <summary>What decided each cause.</summary>
    public IReadOnlyList<string> Evidence { get; }

    /// <summary>What to do about the primary cause.</summary>
    public string Advice { get; }

    /// <summary>The command name, never its arguments.</summary>
    public string? Command { get; }

    /// <summary>The key, when the client wrote it into the message.</summary>
    public string? Key { get; }

    /// <summary>The endpoint the message names.</summary>
    public string? Endpoint { get; }

    /// <summary>The exception type written in front of the message.</summary>
    public string? ExceptionType { get; }

    /// <summary>The connection failure type of a connection error.</summary>
    public string? FailureType { get; }

    /// <summary>The configured timeout, in milliseconds.</summary>
    public double? TimeoutMs { get; }

    /// <summary>How long an awaited call had waited, in milliseconds.</summary>
    public double? ElapsedMs { get; }

    /// <summary>True when the client flagged possible thread theft.</summary>
    public bool ThreadTheft { get; }

    /// <summary>Every field under the key the message used: numbers, booleans, tuples as objects, else text.</summary>
    public IReadOnlyDictionary<string, FieldValue> Fields { get; }

    /// <summary>The message as read, secrets redacted.</summary>
    public string Message { get; }

    /// <summary>Text that was no field, such as an inner connection error; absent when there is none.</summary>
    [JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingNull)]
    public IReadOnlyList<string>? Notes { get; }
}

/// <summary>One recorded timeout as <c>/timeouts</c> lists it: when, from which source, on which multiplexer, then its diagnosis.</summary>
public sealed class TimeoutAnswer : DiagnosisAnswer
{
    private TimeoutAnswer(ObservedTimeout timeout)
        : base(timeout.Report, timeout.Diagnosis)
    {
        Id = timeout.Id;
        Time = timeout.Time;
        Source = timeout.Source;
        WaitingSince = timeout.WaitingSince;
        Multiplexer = timeout.Multiplexer;
        ThreadPoolAtCatch = timeout.ThreadPoolAtCatch;
        LiveCountersAtCatch = timeout.LiveCountersAtCatch;
        Settled = timeout.Settled;
    }

    /// <summary>The answer for <paramref name="timeout"/>.</summary>
    public static TimeoutAnswer From(ObservedTimeout timeout)
    {
        ArgumentNullException.ThrowIfNull(timeout);
        return new TimeoutAnswer(timeout);
    }

    /// <summary>Numbers the timeouts of this process from 1; a revised diagnosis keeps its id.</summary>
    [JsonPropertyOrder(-5)]
    public long Id { get; }

    /// <summary>When it was raised, or the time it was posted with.</summary>
    [JsonPropertyOrder(-4)]
    public DateTimeOffset Time { get; }

    /// <summary><c>first-chance</c>, <c>probe</c> or <c>api</c>.</summary>
    [JsonPropertyOrder(-3)]
    public string Source { get; }

    /// <summary>When the request started waiting; absent when the message has no timeout or elapsed figure.</summary>
    [JsonPropertyOrder(-2)]
    [JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingNull)]
    public DateTimeOffset? WaitingSince { get; }

    /// <summary>The registered multiplexer it is attributed to.</summary>
    [JsonPropertyOrder(-1)]
    public string? Multiplexer { get; }

    /// <summary>False while the diagnosis waits for its endpoint's next server poll; true once final (and counted).</summary>
    [JsonPropertyOrder(-1)]
    public bool Settled { get; }

    /// <summary>The thread pool when it was thrown (in-process only).</summary>
    [JsonPropertyOrder(1)]
    [JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingNull)]
    public ThreadPoolSnapshot? ThreadPoolAtCatch { get; }

    /// <summary>The endpoint's live counters when it was caught (in-process, registered multiplexers only).</summary>
    [JsonPropertyOrder(2)]
    [JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingNull)]
    public LiveCounters? LiveCountersAtCatch { get; }
}

/// <summary>The answer of <c>GET /timeouts</c>: the newest first.</summary>
/// <param name="Count">How many are listed.</param>
/// <param name="TotalRecorded">How many were recorded since start, listed or not.</param>
/// <param name="Timeouts">The timeouts, newest first.</param>
public sealed record TimeoutsAnswer(int Count, long TotalRecorded, IReadOnlyList<TimeoutAnswer> Timeouts)
{
    /// <summary>When the page is full: the <c>before</c> value of the next (older) page.</summary>
    public long? NextBefore { get; init; }
}

/// <summary>A line that could not be used (<c>explain --jsonl</c>): <c>{"error": "..."}</c>.</summary>
/// <param name="Error">Why, in words.</param>
public sealed record ErrorAnswer(string Error);

/// <summary>
/// An HTTP refusal, as RFC 9457 problem details (<c>application/problem+json</c>), with the reason also
/// under <c>error</c>, the member earlier answers used. Every refusal of MuxWatch's endpoints is one.
/// </summary>
/// <param name="Type">A URI naming the problem type (the status's RFC 9110 section).</param>
/// <param name="Title">The status's name.</param>
/// <param name="Status">The HTTP status.</param>
/// <param name="Detail">Why, in words.</param>
/// <param name="Error">The same reason.</param>
public sealed record ProblemAnswer(string Type, string Title, int Status, string Detail, string Error)
{
    /// <summary>The content type problem details are sent with.</summary>
    public const string ContentType = "application/problem+json";

    /// <summary>The refusal with <paramref name="status"/> (named <paramref name="title"/>) for <paramref name="reason"/>.</summary>
    public static ProblemAnswer For(int status, string title, string reason) =>
        new("https://www.rfc-editor.org/rfc/rfc9110#status." + status.ToString(System.Globalization.CultureInfo.InvariantCulture), title, status, reason, reason);
}
