using MuxWatch.Model;
using MuxWatch.Reading;

namespace MuxWatch.Pipeline;

/// <summary>
/// What a source saw, as it saw it: the exception it caught or the text it was given. The pipeline's
/// first step reads it (<see cref="TimeoutMessageReader"/>); it is read once, wherever first needed.
/// </summary>
public sealed class RedisMessage
{
    private readonly Exception? _exception;
    private readonly string? _text;
    private RedisErrorReport? _report;

    private RedisMessage(Exception? exception, string? text, RedisErrorReport? report) =>
        (_exception, _text, _report) = (exception, text, report);

    /// <summary>A caught exception (the first-chance catcher, the probe's own calls).</summary>
    public static RedisMessage FromException(Exception exception) =>
        new(exception ?? throw new ArgumentNullException(nameof(exception)), null, null);

    /// <summary>A message's text (posted, pasted into <c>explain</c>).</summary>
    public static RedisMessage FromText(string text) =>
        new(null, text ?? throw new ArgumentNullException(nameof(text)), null);

    /// <summary>A message already read (a source that had to read it to decide whether to take it).</summary>
    internal static RedisMessage FromReport(RedisErrorReport report) =>
        new(null, null, report ?? throw new ArgumentNullException(nameof(report)));

    /// <summary>The message as read. Reading never throws; the first call reads, later calls return the same report.</summary>
    public RedisErrorReport Read() =>
        _report ??= _exception is not null ? TimeoutMessageReader.Read(_exception) : TimeoutMessageReader.Read(_text!);
}
