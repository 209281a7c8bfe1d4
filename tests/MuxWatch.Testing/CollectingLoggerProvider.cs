using System.Collections.Concurrent;
using Microsoft.Extensions.Logging;

namespace MuxWatch.Testing;

/// <summary>Keeps every log line written through it, formatted, so tests can read (and scan) them.</summary>
public sealed class CollectingLoggerProvider : ILoggerProvider
{
    private readonly ConcurrentQueue<(LogLevel Level, string Text)> _lines = new();

    /// <summary>The lines written so far.</summary>
    public IReadOnlyList<(LogLevel Level, string Text)> Lines => [.. _lines];

    /// <inheritdoc />
    public ILogger CreateLogger(string categoryName) => new Collector(this);

    /// <inheritdoc />
    public void Dispose()
    {
    }

    private sealed class Collector(CollectingLoggerProvider owner) : ILogger
    {
        public IDisposable? BeginScope<TState>(TState state)
            where TState : notnull => null;

        public bool IsEnabled(LogLevel logLevel) => true;

        public void Log<TState>(LogLevel logLevel, EventId eventId, TState state, Exception? exception, Func<TState, Exception?, string> formatter) =>
            owner._lines.Enqueue((logLevel, formatter(state, exception)));
    }
}
