using System.Collections.Concurrent;
using System.Diagnostics;

namespace MuxWatch.Testing;

/// <summary>
/// The MuxWatch service started as a real process on a free loopback port, the way its README runs
/// it; everything it writes is kept so that tests can read (and scan) its logs.
/// </summary>
public sealed class ServiceProcess : IAsyncDisposable
{
    private readonly Process _process;
    private readonly ConcurrentQueue<string> _output = new();

    private ServiceProcess(Process process, int port)
    {
        _process = process;
        Port = port;
        Client = new HttpClient { BaseAddress = new Uri($"http://127.0.0.1:{port}"), Timeout = TimeSpan.FromSeconds(30) };
    }

    /// <summary>The port it serves on.</summary>
    public int Port { get; }

    /// <summary>The operating system's id of the process, to read its resources in <c>/proc</c>.</summary>
    public int ProcessId => _process.Id;

    /// <summary>A client whose base address is the service.</summary>
    public HttpClient Client { get; }

    /// <summary>Everything the process wrote to standard output and error so far.</summary>
    public string Output => string.Join('\n', _output);

    /// <summary>Starts the service with extra command-line <paramref name="arguments"/> and waits until <c>/healthz</c> answers.</summary>
    public static Task<ServiceProcess> StartAsync(params string[] arguments) => StartAsync(new Dictionary<string, string>(), arguments);

    /// <summary>The same, with <paramref name="environment"/> set for the process (a <c>DOTNET_*</c> knob, say).</summary>
    public static Task<ServiceProcess> StartAsync(IReadOnlyDictionary<string, string> environment, params string[] arguments) =>
        StartOnAsync(FreePort.Next(), environment, arguments);

    /// <summary>The same, listening on <paramref name="port"/> (one a scraper was told before the service started).</summary>
    public static async Task<ServiceProcess> StartOnAsync(int port, IReadOnlyDictionary<string, string> environment, params string[] arguments)
    {
        var info = BuiltProgram.StartInfo("MuxWatch.Tool", ["--urls", $"http://127.0.0.1:{port}", .. arguments]);
        foreach (var (name, value) in environment)
        {
            info.Environment[name] = value;
        }

        var process = Process.Start(info) ?? throw new InvalidOperationException("the service did not start");
        var service = new ServiceProcess(process, port);
        process.OutputDataReceived += (_, e) => service.Keep(e.Data);
        process.ErrorDataReceived += (_, e) => service.Keep(e.Data);
        process.BeginOutputReadLine();
        process.BeginErrorReadLine();
        try
        {
            // A minute: on a loaded machine (a build beside the tests) a start took longer than the default 30 s once.
            await Eventually.UntilAsync(
                async () => process.HasExited
                    ? throw new InvalidOperationException($"the service exited with {process.ExitCode}: {service.Output}")
                    : (await service.Client.GetAsync(new Uri("/healthz", UriKind.Relative)).ConfigureAwait(false)).IsSuccessStatusCode,
                $"the service on port {port} to answer /healthz", TimeSpan.FromSeconds(60)).ConfigureAwait(false);
        }
        catch (TimeoutException ex)
        {
            // What the process said meanwhile, for whoever reads the failure; and nothing left running.
            var output = service.Output;
            await service.DisposeAsync().ConfigureAwait(false);
            throw new TimeoutException($"{ex.Message}; the service wrote: {(output.Length > 2000 ? output[^2000..] : output)}", ex);
        }

        return service;
    }

    /// <inheritdoc />
    public async ValueTask DisposeAsync()
    {
        Client.Dispose();
        if (!_process.HasExited)
        {
            _process.Kill(entireProcessTree: true);
            await _process.WaitForExitAsync().ConfigureAwait(false);
        }

        _process.Dispose();
    }

    private void Keep(string? line)
    {
        if (line is not null)
        {
            _output.Enqueue(line);
        }
    }
}
