using System.Net;
using System.Text;
using System.Text.Json;
using MuxWatch.Testing;

namespace MuxWatch.Tool.Tests;

/// <summary>
/// <c>POST /api/timeouts</c> where the process and its sockets are the point: a body that drips in below
/// Kestrel's minimum rate, uploads cut off mid-body. (What is read and answered: <see cref="TimeoutsApiTests"/>, in memory.)
/// </summary>
public sealed class TimeoutsApiSocketTests(ServiceFixture fixture) : IClassFixture<ServiceFixture>
{
    private HttpClient Client => fixture.Service.Client;

    [Fact]
    public async Task A_body_that_drips_in_is_cut_off_and_records_nothing()
    {
        var before = await TotalRecordedAsync();
        using var client = new System.Net.Sockets.TcpClient();
        await client.ConnectAsync("127.0.0.1", fixture.Service.Port);
        var stream = client.GetStream();
        await stream.WriteAsync("POST /api/timeouts HTTP/1.1\r\nHost: muxwatch\r\nContent-Type: text/plain\r\nContent-Length: 50000\r\n\r\n"u8.ToArray());

        // The injected fault: one byte every 250 ms, far below Kestrel's minimum rate, until the server answers.
        var answer = new byte[256];
        using var deadline = new CancellationTokenSource(TimeSpan.FromSeconds(60));
        var reading = stream.ReadAsync(answer, deadline.Token).AsTask();
        while (!reading.IsCompleted && !deadline.IsCancellationRequested)
        {
            try
            {
                await stream.WriteAsync("x"u8.ToArray(), deadline.Token);
            }
            catch (IOException)
            {
                break; // the server closed the connection
            }

            await Task.WhenAny(reading, Task.Delay(250, deadline.Token));
        }

        var read = await reading;
        var status = Encoding.ASCII.GetString(answer, 0, read);
        Assert.StartsWith("HTTP/1.1 408", status, StringComparison.Ordinal);
        Assert.Equal(before, await TotalRecordedAsync());
        Assert.True((await Client.GetAsync(new Uri("/healthz", UriKind.Relative))).IsSuccessStatusCode);
    }

    [Fact]
    public async Task Aborted_uploads_are_counted_and_logged_without_a_stack_trace()
    {
        for (var i = 0; i < 5; i++)
        {
            using var client = new System.Net.Sockets.TcpClient();
            await client.ConnectAsync("127.0.0.1", fixture.Service.Port);
            var stream = client.GetStream();
            await stream.WriteAsync("POST /api/timeouts HTTP/1.1\r\nHost: muxwatch\r\nContent-Type: text/plain\r\nContent-Length: 5000\r\n\r\nTimeout performing"u8.ToArray());
            await stream.FlushAsync();
            client.Client.LingerState = new System.Net.Sockets.LingerOption(true, 0);
        }

        await Eventually.UntilAsync(async () =>
        {
            using var status = JsonDocument.Parse(await Client.GetStringAsync(new Uri("/api/status", UriKind.Relative)));
            return status.RootElement.GetProperty("postsRefused").GetProperty("aborted").GetInt64() >= 5;
        }, "the aborted uploads to be counted");
        Assert.DoesNotContain("fail:", fixture.Service.Output, StringComparison.Ordinal);
        Assert.DoesNotContain("   at ", fixture.Service.Output, StringComparison.Ordinal);
    }

    private async Task<long> TotalRecordedAsync()
    {
        using var response = await Client.GetAsync(new Uri("/api/timeouts?limit=0", UriKind.Relative));
        using var document = JsonDocument.Parse(await response.Content.ReadAsStringAsync());
        return document.RootElement.GetProperty("totalRecorded").GetInt64();
    }
}
