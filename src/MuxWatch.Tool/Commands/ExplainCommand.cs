using System.Globalization;
using System.Text;
using MuxWatch.Diagnosis;
using MuxWatch.Json;
using MuxWatch.Model;
using MuxWatch.Pipeline;
using MuxWatch.Reading;
using MuxWatch.Tool.Input;

namespace MuxWatch.Tool.Commands;

/// <summary>
/// <c>explain</c>: reads a StackExchange.Redis timeout message from standard input and says why it
/// happened. With <c>--jsonl</c> it reads JSON lines (each with a <c>message</c> string) and writes
/// exactly one JSON object per input line; a line that is not JSON gets an object with an <c>error</c>.
/// </summary>
internal static class ExplainCommand
{
    // The same steps as every other source, with no sink: explain keeps nothing.
    private static readonly TimeoutPipeline Pipeline = TimeoutPipeline.RulesOnly();

    /// <summary>The longest JSON line read: a message at the reader's bound, JSON-escaped, with room to spare.</summary>
    internal const int MaxLineChars = 2 * TimeoutMessageReader.MaxInputChars;

    /// <summary>Explains the message in <paramref name="file"/> (null or <c>-</c>: <paramref name="input"/>); with <paramref name="jsonLines"/>, each JSON line's.</summary>
    public static async Task<int> RunAsync(bool jsonLines, string? file, TextReader input, TextWriter output, TextWriter error)
    {
        ArgumentNullException.ThrowIfNull(error);
        if (file is not null and not "-")
        {
            StreamReader reader;
            try
            {
                reader = new StreamReader(file);
            }
            catch (Exception ex) when (ex is IOException or UnauthorizedAccessException or ArgumentException or NotSupportedException)
            {
                await error.WriteLineAsync($"explain: cannot read '{file}': {ex.Message}").ConfigureAwait(false);
                return CommandLine.NothingToRead;
            }

            using (reader)
            {
                return await ExplainAsync(jsonLines, reader, output, error).ConfigureAwait(false);
            }
        }

        return await ExplainAsync(jsonLines, input, output, error).ConfigureAwait(false);
    }

    private static async Task<int> ExplainAsync(bool jsonLines, TextReader input, TextWriter output, TextWriter error)
    {
        return jsonLines
            ? await ExplainLinesAsync(input, output).ConfigureAwait(false)
            : await ExplainOneAsync(input, output, error).ConfigureAwait(false);
    }

    private static async Task<int> ExplainOneAsync(TextReader input, TextWriter output, TextWriter error)
    {
        var buffer = new char[TimeoutMessageReader.MaxInputChars];
        var length = 0;
        int read;
        while (length < buffer.Length && (read = await input.ReadAsync(buffer.AsMemory(length)).ConfigureAwait(false)) > 0)
        {
            length += read;
        }

        var text = new string(buffer, 0, length);
        if (string.IsNullOrWhiteSpace(text))
        {
            await error.WriteLineAsync("explain: the input is empty; paste a timeout message, then end input (Ctrl-D).").ConfigureAwait(false);
            return CommandLine.NothingToRead;
        }

        var explained = Explain(text);
        if (!HoldsAMessage(explained.Report))
        {
            // Random bytes, a log line of something else: no header of the client's and no field it writes.
            await error.WriteLineAsync(string.Create(CultureInfo.InvariantCulture,
                $"explain: no StackExchange.Redis message was found in the input ({text.Length} characters read): paste a timeout or connection message, log prefix and stack trace may stay in.")).ConfigureAwait(false);
            return CommandLine.NothingToRead;
        }

        await output.WriteAsync(Describe(explained.Report, explained.Diagnosis)).ConfigureAwait(false);
        return 0;
    }

    /// <summary>
    /// True when the reader found a message of the client's in the text: a header it knows (a timeout, a
    /// connection failure), or at least two of the fields the client writes with the figures it writes there (the
    /// reader takes any "name: value" as a field, and random text holds a "v:" or an "in:" by chance, so only the
    /// glossary's names with a number, a flag or parts count). Anything else is nothing to read (exit 1).
    /// </summary>
    internal static bool HoldsAMessage(RedisErrorReport report) =>
        report.Kind != RedisErrorKind.Unknown
        || report.Fields.Count(field => FieldGlossary.Knows(field.Key) && (field.Value.Number is not null || field.Value.Flag is not null || field.Value.Parts is not null)) >= 2;

    private static async Task<int> ExplainLinesAsync(TextReader input, TextWriter output)
    {
        var lines = new BoundedLineReader(input, MaxLineChars);
        var first = true;
        while (await lines.ReadLineAsync().ConfigureAwait(false) is { } line)
        {
            if (line.TooLong)
            {
                await output.WriteLineAsync(MuxWatchJson.Serialize(new ErrorAnswer($"the line is longer than {MaxLineChars} characters"))).ConfigureAwait(false);
                continue;
            }

            // An editor's byte-order mark is not part of the first line.
            var text = first ? line.Text.TrimStart('\uFEFF') : line.Text;
            first = false;
            await output.WriteLineAsync(ExplainLine(text)).ConfigureAwait(false);
        }

        await output.FlushAsync().ConfigureAwait(false);
        return 0;
    }

    /// <summary>One JSON object for one input line.</summary>
    internal static string ExplainLine(string line)
    {
        // The same line reader as POST /api/timeouts; explain keeps nothing, so a line's time is not needed.
        if (!MessageLine.TryParse(line, TimeProvider.System.GetUtcNow(), out var parsed, out var problem))
        {
            return MuxWatchJson.Serialize(new ErrorAnswer(problem));
        }

        var explained = Explain(parsed.Message);
        return MuxWatchJson.Serialize(DiagnosisAnswer.From(explained.Report, explained.Diagnosis));
    }

    private static ObservedTimeout Explain(string message) =>
        Pipeline.Diagnose(new TimeoutObservation(TimeProvider.System.GetUtcNow(), TimeoutSources.Explain, RedisMessage.FromText(message)));

    /// <summary>
    /// The human reading, in the order a maintainer answers: the cause and how sure, why (the deciding
    /// fields in words, and why it won over the others), what to do first, what would confirm it; then
    /// what the message said.
    /// </summary>
    internal static string Describe(RedisErrorReport report, TimeoutDiagnosis diagnosis)
    {
        var text = new StringBuilder();
        var primary = diagnosis.Cause.ToName();
        var also = diagnosis.Causes.Skip(1).Select(c => c.ToName()).ToList();
        var alsoPresent = also.Count > 0 ? $"; also present: {string.Join(", ", also)}" : string.Empty;
        text.AppendLine(CultureInfo.InvariantCulture, $"Cause:      {primary} ({diagnosis.Confidence.ToString().ToLowerInvariant()} confidence){alsoPresent}");
        var deciding = diagnosis.Evidence.Where(evidence => evidence.Cause == diagnosis.Cause && evidence.Role is not (EvidenceRole.Why or EvidenceRole.Note)).Take(3)
            .Select(evidence => evidence.Body)
            .Concat(diagnosis.Evidence.Where(evidence => evidence.Role == EvidenceRole.Why).Select(evidence => evidence.Text))
            .ToList();
        for (var i = 0; i < deciding.Count; i++)
        {
            text.Append((i == 0 ? "Why:" : string.Empty).PadRight(12)).AppendLine(deciding[i]);
        }

        text.AppendLine(CultureInfo.InvariantCulture, $"First:      {diagnosis.Advice}");
        text.AppendLine(CultureInfo.InvariantCulture, $"To confirm: {CauseAdvice.ConfirmationFor(diagnosis.Cause)}");
        text.AppendLine("Message:    " + report.Kind.ToName()
            + (report.Command is { } command ? $", command {command}" : string.Empty)
            + (report.Key is { } key ? $", key {key}" : string.Empty)
            + (report.Endpoint is { } endpoint ? $", endpoint {endpoint}" : string.Empty)
            + (report.TimeoutMilliseconds is { } timeout ? $", timeout {timeout.ToString(CultureInfo.InvariantCulture)} ms" : string.Empty)
            + (report.ElapsedMilliseconds is { } elapsed ? $", elapsed {elapsed.ToString(CultureInfo.InvariantCulture)} ms" : string.Empty));
        text.AppendLine("Evidence:");
        foreach (var evidence in diagnosis.Evidence)
        {
            text.AppendLine(CultureInfo.InvariantCulture, $"  - {evidence.Line}");
        }

        if (report.Fields.Count > 0)
        {
            text.AppendLine("Fields:");
            foreach (var (name, value) in report.Fields)
            {
                var meaning = FieldGlossary.Meaning(name);
                var line = meaning is null
                    ? string.Create(CultureInfo.InvariantCulture, $"  {name,-16} {value.Raw}")
                    : string.Create(CultureInfo.InvariantCulture, $"  {name,-16} {value.Raw,-40} {meaning}");
                text.AppendLine(line);
            }
        }

        foreach (var note in report.Notes)
        {
            text.AppendLine(CultureInfo.InvariantCulture, $"Note:     {note}");
        }

        return text.ToString();
    }
}
