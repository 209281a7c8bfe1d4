using System.Diagnostics;
using System.Net.Sockets;
using System.Text;

namespace MuxWatch.Testing;

/// <summary>
/// A real <c>redis-server</c> process on a free loopback port, started with the debug command enabled
/// and persistence off, in a temporary directory of its own. Control commands go through <c>redis-cli</c>.
/// </summary>
public sealed class RedisServer : IAsyncDisposable
{
    private readonly string _directory;
    private readonly string[] _extraArguments;
    private Process? _process;

    private RedisServer(int port, string[] extraArguments)
    {
        Port = port;
        _extraArguments = extraArguments;
        _directory = Directory.CreateTempSubdirectory("muxwatch-redis-").FullName;
    }

    /// <summary>The port it listens on.</summary>
    public int Port { get; }

    /// <summary>The password, when the server was started with <c>--requirepass</c>.</summary>
    public string? Password
    {
        get
        {
            var at = Array.IndexOf(_extraArguments, "--requirepass");
            return at >= 0 && at + 1 < _extraArguments.Length ? _extraArguments[at + 1] : null;
        }
    }

    /// <summary><c>127.0.0.1:port</c>.</summary>
    public string EndPoint => $"127.0.0.1:{Port}";

    /// <summary>
    /// Starts a server and waits until it answers PING; on another free port when it exits first (a port taken by another
    /// process between the OS freeing it and the server binding it ends it at once), three tries. A full run once waited
    /// 30 s for a cluster node that never answered, its cause unknown: it now says what the server printed.
    /// </summary>
    public static async Task<RedisServer> StartAsync(params string[] extraArguments)
    {
        for (var attempt = 1; ; attempt++)
        {
            var server = new RedisServer(FreePort.Next(), extraArguments);
            try
            {
                await server.StartProcessAsync().ConfigureAwait(false);
                return server;
            }
            catch (ExitedEarlyException) when (attempt < 3)
            {
                await server.DisposeAsync().ConfigureAwait(false);
            }
        }
    }

    /// <summary>Starts a server on <paramref name="port"/> (one a test kept free, to start Redis late) and waits until it answers PING.</summary>
    public static async Task<RedisServer> StartOnAsync(int port, params string[] extraArguments)
    {
        var server = new RedisServer(port, extraArguments);
        await server.StartProcessAsync().ConfigureAwait(false);
        return server;
    }

    /// <summary>Kills the process at once (SIGKILL), as a crash would.</summary>
    public async Task KillAsync()
    {
        if (_process is { HasExited: false } process)
        {
            process.Kill(entireProcessTree: true);
            await process.WaitForExitAsync().ConfigureAwait(false);
        }
    }

    /// <summary>
    /// Stops the process for <paramref name="span"/> (SIGSTOP, then SIGCONT), as a paused VM, a swapping host
    /// or CPU steal stops a server: no command runs long and nothing is logged; the same process and
    /// connections afterwards. Returns once it runs again (always, even when the wait is cancelled).
    /// </summary>
    public async Task PauseAsync(TimeSpan span)
    {
        var pid = _process?.Id ?? throw new InvalidOperationException("the server is not running");
        await SignalAsync("-STOP", pid).ConfigureAwait(false);
        try
        {
            await Task.Delay(span).ConfigureAwait(false); // the length of the fault induced, not a wait for a condition
        }
        finally
        {
            await SignalAsync("-CONT", pid).ConfigureAwait(false);
        }
    }

    private static async Task SignalAsync(string signal, int pid)
    {
        using var kill = Process.Start("kill", [signal, pid.ToString(System.Globalization.CultureInfo.InvariantCulture)]);
        await kill.WaitForExitAsync().ConfigureAwait(false);
    }

    /// <summary>Starts the server again on the same port (after <see cref="KillAsync"/>), as a restarted Redis would come back.</summary>
    public Task RestartAsync() => StartProcessAsync();

    /// <summary>Runs one command through <c>redis-cli</c> and returns its output.</summary>
    public Task<string> CommandAsync(params string[] arguments) => CommandWithPasswordAsync(Password, arguments);

    /// <summary>Runs one command through <c>redis-cli</c> authenticated with <paramref name="password"/> (one a test set since).</summary>
    public async Task<string> CommandWithPasswordAsync(string? password, params string[] arguments)
    {
        var info = new ProcessStartInfo("redis-cli") { RedirectStandardOutput = true, RedirectStandardError = true };
        if (password is not null)
        {
            info.Environment["REDISCLI_AUTH"] = password;
        }

        foreach (var argument in (string[])["-h", "127.0.0.1", "-p", Port.ToString(System.Globalization.CultureInfo.InvariantCulture), .. arguments])
        {
            info.ArgumentList.Add(argument);
        }

        using var process = Process.Start(info)!;
        return (await OutputWithinDeadlineAsync(process, arguments).ConfigureAwait(false)).Trim();
    }

    /// <summary>How long a redis-cli command may take: the longest a test blocks the server is 11 s; a server that never answers fails the test here, naming the command, instead of holding the run.</summary>
    private static readonly TimeSpan CommandDeadline = TimeSpan.FromMinutes(2);

    private static async Task<string> OutputWithinDeadlineAsync(Process process, string[] arguments)
    {
        using var deadline = new CancellationTokenSource(CommandDeadline);
        try
        {
            var error = process.StandardError.ReadToEndAsync(deadline.Token); // read as well, so that a full pipe never blocks redis-cli
            var output = await process.StandardOutput.ReadToEndAsync(deadline.Token).ConfigureAwait(false);
            await process.WaitForExitAsync(deadline.Token).ConfigureAwait(false);
            await error.ConfigureAwait(false);
            return output;
        }
        catch (OperationCanceledException) when (deadline.IsCancellationRequested)
        {
            process.Kill();
            throw new TimeoutException($"redis-cli {string.Join(' ', arguments)} did not finish within {CommandDeadline.TotalMinutes:0} minutes");
        }
    }

    /// <summary>
    /// Runs one command through <c>redis-cli</c> on a connection named <paramref name="clientName"/> (<c>CLIENT SETNAME</c>
    /// first, on the same connection), as a named job or an operator's session sends it; returns the command's output.
    /// </summary>
    public async Task<string> CommandAsClientAsync(string clientName, params string[] arguments)
    {
        var info = new ProcessStartInfo("redis-cli") { RedirectStandardInput = true, RedirectStandardOutput = true, RedirectStandardError = true };
        if (Password is not null)
        {
            info.Environment["REDISCLI_AUTH"] = Password;
        }

        foreach (var argument in (string[])["-h", "127.0.0.1", "-p", Port.ToString(System.Globalization.CultureInfo.InvariantCulture)])
        {
            info.ArgumentList.Add(argument);
        }

        using var process = Process.Start(info)!;
        // redis-cli reading commands from its input sends them in order on one connection; each argument quoted.
        static string Quoted(string argument) => "\"" + argument.Replace("\\", "\\\\", StringComparison.Ordinal).Replace("\"", "\\\"", StringComparison.Ordinal) + "\"";
        await process.StandardInput.WriteLineAsync($"CLIENT SETNAME {Quoted(clientName)}").ConfigureAwait(false);
        await process.StandardInput.WriteLineAsync(string.Join(' ', arguments.Select(Quoted))).ConfigureAwait(false);
        process.StandardInput.Close();
        var output = await OutputWithinDeadlineAsync(process, arguments).ConfigureAwait(false);
        var lines = output.Trim().Split('\n');
        return string.Join('\n', lines.Skip(1)).Trim(); // the first line is CLIENT SETNAME's OK
    }

    /// <summary>Starts a command without waiting for its answer, for commands that block the server (DEBUG SLEEP).</summary>
    public Task<string> CommandInBackground(params string[] arguments) => Task.Run(() => CommandAsync(arguments));

    /// <summary>True when the server answers PING on a fresh connection.</summary>
    public async Task<bool> AnswersPingAsync()
    {
        try
        {
            using var client = new TcpClient();
            using var timeout = new CancellationTokenSource(TimeSpan.FromSeconds(1));
            await client.ConnectAsync("127.0.0.1", Port, timeout.Token).ConfigureAwait(false);
            var stream = client.GetStream();
            await stream.WriteAsync("PING\r\n"u8.ToArray(), timeout.Token).ConfigureAwait(false);
            var buffer = new byte[64];
            var read = await stream.ReadAsync(buffer, timeout.Token).ConfigureAwait(false);
            var answer = Encoding.ASCII.GetString(buffer, 0, read);

            // A server with a password answers NOAUTH: it is up all the same.
            return answer.StartsWith("+PONG", StringComparison.Ordinal) || answer.StartsWith("-NOAUTH", StringComparison.Ordinal);
        }
        catch (Exception ex) when (ex is SocketException or IOException or OperationCanceledException)
        {
            return false;
        }
    }

    /// <inheritdoc />
    public async ValueTask DisposeAsync()
    {
        await KillAsync().ConfigureAwait(false);
        _process?.Dispose();
        try
        {
            Directory.Delete(_directory, recursive: true);
        }
        catch (IOException)
        {
        }
    }

    private async Task StartProcessAsync()
    {
        var info = new ProcessStartInfo("redis-server")
        {
            RedirectStandardOutput = true,
            RedirectStandardError = true,
            WorkingDirectory = _directory,
        };
        string[] arguments =
        [
            "--port", Port.ToString(System.Globalization.CultureInfo.InvariantCulture), "--bind", "127.0.0.1",
            "--save", string.Empty, "--appendonly", "no", "--dir", _directory,
            "--enable-debug-command", "yes", "--protected-mode", "no", "--daemonize", "no",
            .. _extraArguments,
        ];
        foreach (var argument in arguments)
        {
            info.ArgumentList.Add(argument);
        }

        if (_process is { HasExited: false })
        {
            // Starting over a running server would orphan it: the new one fails to bind, the old one is no longer tracked.
            throw new InvalidOperationException($"redis-server on port {Port} is still running; kill it before restarting it");
        }

        _process?.Dispose();
        var process = _process = Process.Start(info) ?? throw new InvalidOperationException("redis-server did not start");
        var said = new System.Collections.Concurrent.ConcurrentQueue<string>(); // its first lines, to say why it exited
        void Keep(object sender, DataReceivedEventArgs line)
        {
            if (line.Data is { } text && said.Count < 40)
            {
                said.Enqueue(text);
            }
        }

        process.OutputDataReceived += Keep;
        process.ErrorDataReceived += Keep;
        process.BeginOutputReadLine();
        process.BeginErrorReadLine();
        await Eventually.UntilAsync(async () => process.HasExited || await AnswersPingAsync().ConfigureAwait(false), $"redis-server on port {Port} to answer PING").ConfigureAwait(false);
        if (process.HasExited)
        {
            throw new ExitedEarlyException($"redis-server on port {Port} exited ({process.ExitCode}) before answering PING: {string.Join(" | ", said.TakeLast(5))}");
        }
    }

    /// <summary>The server's process ended before it answered (a port taken under it, an argument it refused).</summary>
    internal sealed class ExitedEarlyException(string message) : Exception(message);
}
