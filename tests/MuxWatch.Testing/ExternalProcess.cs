using System.Collections.Concurrent;
using System.Diagnostics;

namespace MuxWatch.Testing;

/// <summary>A program run by a test (Prometheus, Alertmanager), its output kept, killed with the test.</summary>
public sealed class ExternalProcess : IAsyncDisposable
{
    private readonly Process _process;
    private readonly ConcurrentQueue<string> _output = new();

    private ExternalProcess(Process process)
    {
        _process = process;
        process.OutputDataReceived += (_, e) => Keep(e.Data);
        process.ErrorDataReceived += (_, e) => Keep(e.Data);
        process.BeginOutputReadLine();
        process.BeginErrorReadLine();
    }

    /// <summary>Everything it wrote so far.</summary>
    public string Output => string.Join('\n', _output);

    /// <summary>Its process id.</summary>
    public int Id => _process.Id;

    /// <summary>True once it has exited.</summary>
    public bool HasExited => _process.HasExited;

    /// <summary>Starts <paramref name="program"/> with <paramref name="arguments"/>.</summary>
    public static ExternalProcess Start(string program, params string[] arguments)
    {
        var info = new ProcessStartInfo(program) { RedirectStandardOutput = true, RedirectStandardError = true };
        foreach (var argument in arguments)
        {
            info.ArgumentList.Add(argument);
        }

        return new ExternalProcess(Process.Start(info) ?? throw new InvalidOperationException($"{program} did not start"));
    }

    /// <inheritdoc />
    public async ValueTask DisposeAsync()
    {
        if (!_process.HasExited)
        {
            _process.Kill(entireProcessTree: true);
            await _process.WaitForExitAsync().ConfigureAwait(false);
        }

        _process.Dispose();
    }

    private void Keep(string? line)
    {
        if (line is not null && _output.Count < 10_000)
        {
            _output.Enqueue(line);
        }
    }
}
