using System.Text.Encodings.Web;
using System.Text.Json;

namespace MuxWatch.Timeouts;

/// <summary>
/// Writes reports and diagnoses as JSON: fields under the keys the message used, numbers as numbers,
/// flags as booleans, tuples such as <c>WORKER</c> as objects (<c>{"Busy": 6, "Free": 994, ...}</c>).
/// </summary>
public static class TimeoutJson
{
    /// <summary>
    /// Writer options for MuxWatch's JSON: characters such as '&gt;' stay readable, since the output
    /// is read by people and tools, never embedded in HTML.
    /// </summary>
    public static JsonWriterOptions WriterOptions { get; } = new() { Encoder = JavaScriptEncoder.UnsafeRelaxedJsonEscaping };

    /// <summary>Writes the members of one diagnosed message (no enclosing braces).</summary>
    public static void WriteDiagnosisMembers(Utf8JsonWriter writer, RedisErrorReport report, TimeoutDiagnosis diagnosis)
    {
        ArgumentNullException.ThrowIfNull(writer);
        ArgumentNullException.ThrowIfNull(report);
        ArgumentNullException.ThrowIfNull(diagnosis);
        writer.WriteString("kind", KindName(report.Kind));
        writer.WriteString("cause", diagnosis.Cause.ToName());
        writer.WriteStartArray("causes");
        foreach (var cause in diagnosis.Causes)
        {
            writer.WriteStringValue(cause.ToName());
        }

        writer.WriteEndArray();
        writer.WriteStartArray("evidence");
        foreach (var line in diagnosis.Evidence)
        {
            writer.WriteStringValue(line);
        }

        writer.WriteEndArray();
        writer.WriteString("advice", diagnosis.Advice);
        WriteNullable(writer, "command", report.Command);
        WriteNullable(writer, "key", report.Key);
        WriteNullable(writer, "endpoint", report.Endpoint);
        WriteNullable(writer, "exceptionType", report.ExceptionType);
        WriteNullable(writer, "failureType", report.FailureType);
        WriteNullable(writer, "timeoutMs", report.TimeoutMilliseconds);
        WriteNullable(writer, "elapsedMs", report.ElapsedMilliseconds);
        writer.WriteBoolean("threadTheft", report.ThreadTheftIndicated);
        writer.WriteStartObject("fields");
        foreach (var (name, value) in report.Fields)
        {
            writer.WritePropertyName(name);
            WriteValue(writer, value);
        }

        writer.WriteEndObject();
        writer.WriteString("message", report.Text);
        if (report.Notes.Count > 0)
        {
            writer.WriteStartArray("notes");
            foreach (var note in report.Notes)
            {
                writer.WriteStringValue(note);
            }

            writer.WriteEndArray();
        }
    }

    /// <summary>Writes one observed timeout as an object: time, source, multiplexer, endpoint, then the diagnosis.</summary>
    public static void WriteObserved(Utf8JsonWriter writer, ObservedTimeout timeout)
    {
        ArgumentNullException.ThrowIfNull(writer);
        ArgumentNullException.ThrowIfNull(timeout);
        writer.WriteStartObject();
        writer.WriteString("time", timeout.Time);
        writer.WriteString("source", timeout.Source);
        if (timeout.WaitingSince is { } since)
        {
            writer.WriteString("waitingSince", since);
        }

        WriteNullable(writer, "multiplexer", timeout.Multiplexer);
        WriteDiagnosisMembers(writer, timeout.Report, timeout.Diagnosis);
        if (timeout.ThreadPoolAtCatch is { } pool)
        {
            writer.WriteStartObject("threadPoolAtCatch");
            writer.WriteNumber("workerBusy", pool.WorkerBusy);
            writer.WriteNumber("workerMin", pool.WorkerMin);
            writer.WriteNumber("workerMax", pool.WorkerMax);
            writer.WriteNumber("ioBusy", pool.IoBusy);
            writer.WriteNumber("ioMin", pool.IoMin);
            writer.WriteNumber("ioMax", pool.IoMax);
            writer.WriteNumber("threads", pool.Threads);
            writer.WriteNumber("queueLength", pool.QueueLength);
            writer.WriteNumber("completedItems", pool.CompletedItems);
            writer.WriteEndObject();
        }
        writer.WriteEndObject();
    }

    /// <summary>The kind's name in JSON, e.g. <c>sync-timeout</c>.</summary>
    public static string KindName(RedisErrorKind kind) => kind switch
    {
        RedisErrorKind.SyncTimeout => "sync-timeout",
        RedisErrorKind.AsyncTimeout => "async-timeout",
        RedisErrorKind.BacklogTimeout => "backlog-timeout",
        RedisErrorKind.WriteTimeout => "write-timeout",
        RedisErrorKind.NoConnection => "no-connection",
        RedisErrorKind.ConnectionFailure => "connection-failure",
        _ => "unknown",
    };

    private static void WriteValue(Utf8JsonWriter writer, FieldValue value)
    {
        if (value.Parts is { } parts)
        {
            writer.WriteStartObject();
            foreach (var (name, part) in parts)
            {
                writer.WritePropertyName(name);
                WriteValue(writer, part);
            }

            writer.WriteEndObject();
        }
        else if (value.Number is { } number)
        {
            writer.WriteNumberValue(number);
        }
        else if (value.Flag is { } flag)
        {
            writer.WriteBooleanValue(flag);
        }
        else
        {
            writer.WriteStringValue(value.Raw);
        }
    }

    private static void WriteNullable(Utf8JsonWriter writer, string name, string? value)
    {
        if (value is null)
        {
            writer.WriteNull(name);
        }
        else
        {
            writer.WriteString(name, value);
        }
    }

    private static void WriteNullable(Utf8JsonWriter writer, string name, double? value)
    {
        if (value is { } number)
        {
            writer.WriteNumber(name, number);
        }
        else
        {
            writer.WriteNull(name);
        }
    }
}
