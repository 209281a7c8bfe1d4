using System.Text.Json.Serialization;
using MuxWatch.Model;

namespace MuxWatch.Json;

/// <summary>
/// One diagnosed message as JSON: what it was, why it happened, and every field it carried under the
/// key it was written with. <c>explain --jsonl</c> writes this; a recorded timeout adds when and where.
/// </summary>
public class DiagnosisAnswer
{
    /// <summary>Describes one message and its diagnosis.</summary>
    protected DiagnosisAnswer(RedisErrorReport report, TimeoutDiagnosis diagnosis)
        : this(report, diagnosis, report?.Endpoint)
    {
    }

    /// <summary>Describes one message and its diagnosis, at <paramref name="endpoint"/> when the message named none but the catch knew it.</summary>
    private protected DiagnosisAnswer(RedisErrorReport report, TimeoutDiagnosis diagnosis, string? endpoint)
    {
        ArgumentNullException.ThrowIfNull(report);
        ArgumentNullException.ThrowIfNull(diagnosis);
        Kind = report.Kind;
        Cause = diagnosis.Cause;
        Confidence = diagnosis.Confidence;
        Causes = diagnosis.Causes;
        Evidence = diagnosis.EvidenceLines;
        Advice = diagnosis.Advice;
        Command = report.Command;
        Key = report.Key;
        Endpoint = endpoint;
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

    /// <summary>The endpoint the message names (a recorded one: or the one server its multiplexer talks to).</summary>
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
