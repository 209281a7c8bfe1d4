using System.Globalization;
using System.Net.Sockets;
using System.Text;

namespace MuxWatch.Testing;

/// <summary>
/// What a real server executes, as its <c>MONITOR</c> streams it: each command's name, the client that sent
/// it and the server's own timestamp. Read over a plain socket, because the client under test refuses
/// MONITOR (and a test must not rely on the code it checks).
/// </summary>
public sealed class RedisMonitor : IAsyncDisposable
{
    private readonly TcpClient _client;
    private readonly CancellationTokenSource _stopping = new();
    private readonly Lock _lock = new();
    private readonly List<MonitoredCommand> _commands = [];
    private readonly Task _reading;

    private RedisMonitor(TcpClient client)
    {
        _client = client;
        _reading = Task.Run(ReadAsync);
    }

    /// <summary>Starts monitoring <paramref name="server"/>; returns once the server confirmed (<c>+OK</c>).</summary>
    public static async Task<RedisMonitor> StartAsync(RedisServer server)
    {
        ArgumentNullException.ThrowIfNull(server);
        var client = new TcpClient();
        await client.ConnectAsync("127.0.0.1", server.Port).ConfigureAwait(false);
        var stream = client.GetStream();
        var request = server.Password is { } password ? $"AUTH {password}\r\nMONITOR\r\n" : "MONITOR\r\n";
        await stream.WriteAsync(Encoding.ASCII.GetBytes(request)).ConfigureAwait(false);
        return new RedisMonitor(client);
    }

    /// <summary>Every command seen so far whose name is <paramref name="name"/> (any case), oldest first.</summary>
    public IReadOnlyList<MonitoredCommand> Commands(string name)
    {
        lock (_lock)
        {
            return [.. _commands.Where(c => string.Equals(c.Name, name, StringComparison.OrdinalIgnoreCase))];
        }
    }

    public async ValueTask DisposeAsync()
    {
        await _stopping.CancelAsync().ConfigureAwait(false);
        _client.Dispose();
        try
        {
            await _reading.ConfigureAwait(false);
        }
        catch (Exception ex) when (ex is IOException or ObjectDisposedException or OperationCanceledException or SocketException)
        {
        }

        _stopping.Dispose();
    }

    private async Task ReadAsync()
    {
        using var reader = new StreamReader(_client.GetStream(), Encoding.UTF8);
        while (!_stopping.IsCancellationRequested && await reader.ReadLineAsync(_stopping.Token).ConfigureAwait(false) is { } line)
        {
            if (MonitoredCommand.Parse(line) is { } command)
            {
                lock (_lock)
                {
                    _commands.Add(command);
                }
            }
        }
    }
}

/// <summary>One line of <c>MONITOR</c>: <c>+1700000000.123456 [0 127.0.0.1:40000] "INFO" "server"</c>.</summary>
/// <param name="At">The server's clock when it ran the command, in Unix seconds.</param>
/// <param name="Client">The sending client's address.</param>
/// <param name="Name">The command's name as sent.</param>
/// <param name="ArgumentCount">How many arguments followed the name.</param>
public sealed record MonitoredCommand(double At, string Client, string Name, int ArgumentCount)
{
    public static MonitoredCommand? Parse(string line)
    {
        ArgumentNullException.ThrowIfNull(line);
        var text = line.TrimStart('+');
        var open = text.IndexOf(" [", StringComparison.Ordinal);
        var close = text.IndexOf("] ", StringComparison.Ordinal);
        if (open < 0 || close < open
            || !double.TryParse(text[..open], NumberStyles.Float, CultureInfo.InvariantCulture, out var at))
        {
            return null; // +OK, or anything that is not a command line
        }

        var client = text[(open + 2)..close].Split(' ').Last();
        var words = text[(close + 2)..].Split("\" \"");
        return new MonitoredCommand(at, client, words[0].Trim('"'), words.Length - 1);
    }
}
